-- Who leads a running step's process group (`<boot id>/<start time>`, runner/process-identity.ts),
-- so that crash recovery kills the group only while its number still names it.
ALTER TABLE step_executions ADD COLUMN process_identity TEXT;
