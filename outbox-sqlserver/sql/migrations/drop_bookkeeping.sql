DROP TABLE IF EXISTS {migrations};
