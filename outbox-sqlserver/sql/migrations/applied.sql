SELECT version, checksum FROM {migrations} ORDER BY version;
