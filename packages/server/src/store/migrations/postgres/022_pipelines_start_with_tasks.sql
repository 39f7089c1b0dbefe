-- A pipeline is started once its first task is, at that task's start time: in the statement
-- that starts the task, rather than in a statement of its own at each claim (bench/README.md,
-- #26). A pipeline queued, aborted or ended is left as it is.
CREATE FUNCTION start_pipeline() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE pipelines SET status = 'started', start_time = NEW.start_time
  WHERE id = NEW.pipeline_id AND status = 'created';
  RETURN NULL;
END
$$;

CREATE TRIGGER pipelines_start_with_tasks AFTER UPDATE OF status ON tasks
  FOR EACH ROW WHEN (NEW.status = 'started' AND OLD.status IS DISTINCT FROM 'started')
  EXECUTE FUNCTION start_pipeline();
