DELETE FROM {migrations} WHERE version = @P1;
