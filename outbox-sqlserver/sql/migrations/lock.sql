-- One lock per outbox table, held until the migrating transaction ends, so two hosts
-- migrating at once take turns. A negative result means the lock was not granted.
DECLARE @granted int;
EXEC @granted = sp_getapplock @Resource = @P1, @LockMode = 'Exclusive',
                              @LockOwner = 'Transaction', @LockTimeout = 60000;
IF @granted < 0
    THROW 51000, 'could not take the outbox migration lock', 1;
