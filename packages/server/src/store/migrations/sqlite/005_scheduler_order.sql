-- Waiting tasks in the order the scheduler takes them (oldest first), so that claiming one
-- stops at the first runnable task instead of weighing every waiting one.
CREATE INDEX tasks_created_in_order ON tasks (creation_time, id) WHERE status = 'created';
