INSERT INTO {migrations} (version, name) VALUES (@P1, @P2);
