-- A task's key is valid while its attempt runs (services/auth.service.ts): it goes as its task
-- leaves `started`, however it leaves (an end, a retry, an abort, a recovery), in the statement
-- that moves it, rather than in a statement of its own at each end (bench/README.md, #26).
CREATE TRIGGER task_keys_end_with_attempts AFTER UPDATE OF status ON tasks
WHEN OLD.status = 'started' AND NEW.status IS NOT 'started' BEGIN
  DELETE FROM task_keys WHERE task_id = NEW.id;
END;
