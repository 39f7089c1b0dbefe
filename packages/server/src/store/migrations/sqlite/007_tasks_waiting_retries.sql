-- Only the tasks waiting for a retry (the scheduler's next wake-up): creating or claiming any
-- other task no longer writes this index.
DROP INDEX tasks_waiting;
CREATE INDEX tasks_waiting ON tasks (not_before) WHERE status = 'created' AND not_before IS NOT NULL;
