-- A pipeline is started once its first task is, at that task's start time: in the statement
-- that starts the task, rather than in a statement of its own at each claim (bench/README.md,
-- #26). A pipeline queued, aborted or ended is left as it is.
CREATE TRIGGER pipelines_start_with_tasks AFTER UPDATE OF status ON tasks
WHEN NEW.status = 'started' AND OLD.status IS NOT 'started' BEGIN
  UPDATE pipelines SET status = 'started', start_time = NEW.start_time
  WHERE id = NEW.pipeline_id AND status = 'created';
END;
