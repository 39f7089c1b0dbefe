/** Names of projects, resources, parameters and pipeline tasks. */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,99}$/;
