// Which test asserts the effect of each property a client may send (every property of a
// request body or of a resource spec in the bundled spec), checked by
// test/unit/spec-coverage.test.ts: a property added to the spec without an entry here fails
// the tests. A test that merely sends a property does not count; one that shows what it does
// does (for a property only shown to users, that it is stored and returned as given).
//
// A reference is `file > title`: the file relative to packages/server when it starts with
// `test/`, else relative to the repository root; the title of a test or of its group, or a
// case of an `it.each` ('ticks a oneshot on time, once per tick' for the template
// 'ticks %s on time, once per tick' with the case 'a oneshot').

const properties = 'test/api/spec-properties.test.ts';
const pipelines = 'test/api/pipelines.test.ts';
const commands = 'test/api/commands.test.ts';
const events = 'test/api/events.test.ts';
const resources = 'test/api/resources.test.ts';
const ticker = 'test/unit/sources/time-ticker.test.ts';
const schedules = 'test/unit/domain/events/schedules.test.ts';
const webhooks = 'test/api/webhooks.test.ts';
const timeouts = 'test/api/timeouts.test.ts';
const notifications = 'test/api/notifications.test.ts';

const RUNS_A_COMMAND = `${commands} > stores the execution, fills defaults, and runs its pipelines with the parameters`;
const STARTS_ON_EVENT = `${events} > stores one event per matching trigger and starts its pipelines`;
const CLEAN_ENVIRONMENT = `${pipelines} > gets a clean environment with its variables and parameters`;
const CONTEXT_FILE = `${pipelines} > finds the event, its parameters and its identities in the context file`;
const DEPENDENCY_ORDER = `${pipelines} > runs tasks in dependency order`;
const FIRST_FAILING_STEP = `${pipelines} > fails a task at its first failing step, naming it, and aborts the rest with on_failure abort`;
const RETRIES = `${pipelines} > retries a failed task after retry_delay and keeps the output of every attempt`;
const EACH_TYPE = `${properties} > installs each type of spec as a resource of that type, found by type and name, as installed`;
const VERSION_AND_TYPE = `${properties} > refuses a spec of another version, or whose data is not of its type`;
const HOURLY = `${ticker} > ticks an hourly schedule on time, once per tick`;
const DAILY = `${ticker} > ticks a daily schedule over the end of a month on time, once per tick`;
const WEEKLY = `${ticker} > ticks a weekly schedule across weeks on time, once per tick`;
const containers = 'test/api/containers.test.ts';
const NOTIFIES_FAILURE = `${notifications} > posts a failed pipeline to its webhook, signed with its identity, and emails its addresses`;
const NOTIFIES_WHEN_ASKED = `${notifications} > notifies a successful or aborted end only when a notification asks for it`;
const REFUSES_NOTIFICATIONS = `${notifications} > refuses a notification without a webhook or an email, or with a bad URL or address`;
const CONTAINER = `${containers} > runs each step in a new container of its image, as the task user, with the contract of a local step`;
const CONTAINER_LIMITS = `${containers} > limits memory and CPUs, and turns the network off, as the runtime says`;
const identities = 'test/api/identities.test.ts';
const IDENTITY_CREATED = `${identities} > stores an identity and answers 201 with its members and variables, never its values`;
const IDENTITY_VARIABLES = `${identities} > gives the steps their variables, and SSH keys as files only the task reads`;
const IDENTITY_MASKED = `${identities} > masks every value in the stored output, even written in pieces`;

const CREATES_AN_ACCOUNT =
  'test/api/accounts.test.ts > creates an account in the organization of an admin, with no key yet, and answers 201';

export type TestReference = string;

/** Each property, as `Schema.property`, with the tests that assert its effect. */
export const COVERAGE: Readonly<Record<string, TestReference | readonly TestReference[]>> = {
  'ProjectData.name': [
    'test/api/projects.test.ts > creates a project in the organization of the key and answers 201',
    'test/api/projects.test.ts > renames a project',
  ],
  'AccountData.email_address': CREATES_AN_ACCOUNT,
  'AccountData.role': CREATES_AN_ACCOUNT,
  'AccountData.name': CREATES_AN_ACCOUNT,
  'ApiKeyData.account_id':
    'test/api/api-keys.test.ts > lets an admin create a key for another account of its organization',
  'ApiKeyData.name':
    'test/api/api-keys.test.ts > creates a key for the caller, shows it once, and the key works with the role of its account',
  'ResourceSet.specs': `${resources} > keeps unchanged resources as they are, updates changed ones in place, deletes missing ones`,

  'TaskSpec.type': [EACH_TYPE, VERSION_AND_TYPE],
  'TaskSpec.version': [
    VERSION_AND_TYPE,
    'test/unit/domain/resources/schema-errors.test.ts > reports another version',
  ],
  'TaskSpec.name': [EACH_TYPE, `${resources} > treats a rename as a deletion and a creation`],
  'TaskSpec.description': EACH_TYPE,
  'TaskSpec.data': RUNS_A_COMMAND,
  'TaskData.parameters': [CLEAN_ENVIRONMENT, CONTEXT_FILE],
  'TaskData.runtime': CONTAINER,
  'TaskRuntime.name': CONTAINER,
  'TaskRuntime.parameters': CONTAINER,
  'TaskRuntime.parameters.image': [
    CONTAINER,
    'test/unit/runner/container.test.ts > refuses an image name the engine would read as an option',
  ],
  'TaskRuntime.parameters.pull': [
    `${containers} > pulls the image as the runtime says: never`,
    `${containers} > pulls the image as the runtime says: always`,
  ],
  'TaskRuntime.parameters.memory': CONTAINER_LIMITS,
  'TaskRuntime.parameters.cpus': CONTAINER_LIMITS,
  'TaskRuntime.parameters.network': [CONTAINER, CONTAINER_LIMITS],
  'TaskData.identities': [
    CONTEXT_FILE,
    IDENTITY_VARIABLES,
    `${identities} > deletes an identity; tasks naming it then fail at their start, saying so`,
  ],
  'TaskData.environment': CLEAN_ENVIRONMENT,
  'TaskData.steps': FIRST_FAILING_STEP,
  'TaskData.timeout': [
    `${timeouts} > counts the task's timeout over all its steps, and stops the one running when it passes`,
    `${timeouts} > retries a task that timed out, with its full time again`,
    `${timeouts} > stops a task without a timeout of its own, and a task's own timeout overrides it`,
  ],
  'TaskStep.label': [FIRST_FAILING_STEP, RUNS_A_COMMAND],
  'TaskStep.command':
    'test/reliability/injection.test.ts > passes the arguments of a command step as they are',
  'TaskStep.arguments': [
    'test/reliability/injection.test.ts > passes the arguments of a command step as they are',
    'test/api/spec-properties.test.ts > passes the arguments of a script step as $1, $2..., without shell expansion',
  ],
  'TaskStep.code': [
    RUNS_A_COMMAND,
    'test/unit/runner/runner.test.ts > runs code without a #! line under /bin/sh with set -eu',
    'test/unit/runner/runner.test.ts > runs code with a #! line with its own interpreter',
  ],
  'TaskStep.timeout': `${timeouts} > stops a step past its timeout as an abort does, and fails the task naming the step and the timeout`,
  'TaskStep.source': `${properties} > keeps the source of a step only to show it, and runs its code`,
  'CommandParameter.name': RUNS_A_COMMAND,
  'CommandParameter.type': [
    `${commands} > answers invalid_request_body with a pointer for a value of the wrong type, and stores nothing`,
    CLEAN_ENVIRONMENT,
  ],
  'CommandParameter.values': `${commands} > answers invalid_request_body with a pointer for a value not among values, and stores nothing`,
  'CommandParameter.default': [
    RUNS_A_COMMAND,
    `${commands} > answers invalid_request_body with a pointer for a missing required parameter, and stores nothing`,
  ],
  'CommandParameter.description': EACH_TYPE,
  'CommandParameter.environment': CLEAN_ENVIRONMENT,

  'PipelineSpec.type': [EACH_TYPE, VERSION_AND_TYPE],
  'PipelineSpec.version': VERSION_AND_TYPE,
  'PipelineSpec.name': EACH_TYPE,
  'PipelineSpec.description': EACH_TYPE,
  'PipelineSpec.data': RUNS_A_COMMAND,
  'PipelineData.concurrent': [
    `${pipelines} > queues instances of a non-concurrent pipeline, oldest first`,
    `${pipelines} > runs instances of a concurrent pipeline at the same time`,
  ],
  'PipelineData.retention': [
    'test/api/retention.test.ts > deletes a finished pipeline with its tasks, steps and scratchpad once its retention has passed',
    'test/api/retention.test.ts > keeps the step output of a pipeline with a retention of its own for that retention',
  ],
  'PipelineData.tasks': DEPENDENCY_ORDER,
  'PipelineData.notifications': [NOTIFIES_FAILURE, NOTIFIES_WHEN_ASKED],
  'PipelineNotification.on': [NOTIFIES_WHEN_ASKED, REFUSES_NOTIFICATIONS],
  'PipelineNotification.webhook': [NOTIFIES_FAILURE, REFUSES_NOTIFICATIONS],
  'PipelineNotification.webhook.url': [
    NOTIFIES_FAILURE,
    `${notifications} > retries a receiver that answers 500, then 200, and shows both attempts`,
    REFUSES_NOTIFICATIONS,
  ],
  'PipelineNotification.webhook.identity': [
    NOTIFIES_FAILURE,
    `${notifications} > fails the attempts of a webhook whose identity the project lacks, saying so`,
  ],
  'PipelineNotification.email': [NOTIFIES_FAILURE, REFUSES_NOTIFICATIONS],
  'PipelineNotification.email.to': [NOTIFIES_FAILURE, REFUSES_NOTIFICATIONS],
  'PipelineTask.name': `${properties} > runs one task resource under two entry names, which name its tasks, each with its label`,
  'PipelineTask.label': `${properties} > runs one task resource under two entry names, which name its tasks, each with its label`,
  'PipelineTask.task': DEPENDENCY_ORDER,
  'PipelineTask.parameters': [
    CLEAN_ENVIRONMENT,
    `${resources} > reports a pipeline cycle and parameters that do not match the task`,
  ],
  'PipelineTask.dependencies': [
    DEPENDENCY_ORDER,
    `${resources} > reports a pipeline cycle and parameters that do not match the task`,
  ],
  'PipelineTask.on_failure': [
    FIRST_FAILING_STEP,
    `${pipelines} > goes on after a failure with on_failure continue, and still ends failed`,
  ],
  'PipelineTask.nb_instances': `${pipelines} > runs nb_instances instances in parallel, numbered from 1`,
  'PipelineTask.nb_retries': [
    RETRIES,
    `${properties} > fails an instance for good once its nb_retries retries have failed`,
  ],
  'PipelineTask.retry_delay': RETRIES,

  'CommandSpec.type': [EACH_TYPE, VERSION_AND_TYPE],
  'CommandSpec.version': VERSION_AND_TYPE,
  'CommandSpec.name': [
    EACH_TYPE,
    `${resources} > answers the resource of a type with a name, another type being another resource`,
  ],
  'CommandSpec.description': [
    EACH_TYPE,
    `${resources} > answers the resource of a type with a name, another type being another resource`,
  ],
  'CommandSpec.data': RUNS_A_COMMAND,
  'CommandData.parameters': RUNS_A_COMMAND,
  'CommandData.pipelines': `${properties} > starts every pipeline of a command at each execution, and no other`,
  'CommandInvocation.parameters': [
    RUNS_A_COMMAND,
    `${commands} > answers invalid_request_body with a pointer for an unknown parameter, and stores nothing`,
  ],

  'TriggerSpec.type': [EACH_TYPE, VERSION_AND_TYPE],
  'TriggerSpec.version': VERSION_AND_TYPE,
  'TriggerSpec.name': EACH_TYPE,
  'TriggerSpec.description': EACH_TYPE,
  'TriggerSpec.data': STARTS_ON_EVENT,
  'TriggerData.connector': [
    STARTS_ON_EVENT,
    'test/api/time-triggers.test.ts > run their pipelines at each tick of their schedule',
    `${ticker} > plans anew a trigger that was of another connector for a while`,
    `${webhooks} > starts the trigger's pipeline with a signed GitHub delivery, the body as the event's data`,
  ],
  'TriggerData.event': [
    `${properties} > fires a trigger only for the events of its name`,
    'test/api/time-triggers.test.ts > are validated at installation, with a pointer to each problem',
  ],
  'TriggerData.parameters':
    'test/api/time-triggers.test.ts > run their pipelines at each tick of their schedule',
  'TriggerData.filters': [
    `${events} > requires every filter of a trigger to hold`,
    `${ticker} > applies the trigger filters to the tick data`,
  ],
  'TriggerData.pipelines': `${properties} > starts every pipeline of a trigger for each event it accepts, and no other`,
  'TriggerFilter.path': `${events} > filters with a pointer into an array`,
  'TriggerFilter.is_equal_to': [
    `${events} > filters with is_equal_to`,
    `${events} > filters with is_equal_to on objects`,
  ],
  'TriggerFilter.is_not_equal_to': [
    `${events} > filters with is_not_equal_to`,
    `${events} > filters with is_not_equal_to a missing value`,
  ],
  'TriggerFilter.matches': [
    `${events} > filters with matches`,
    `${events} > matches regular expressions in linear time, and answers other organizations meanwhile`,
  ],
  'TriggerFilter.does_not_match': `${events} > filters with does_not_match`,
  'TriggerData.parameters.sender': [
    `${webhooks} > starts the trigger's pipeline with a signed GitHub delivery, the body as the event's data`,
    `${webhooks} > checks GitLab's token, and takes the kind of a delivery from its object_kind`,
    `${webhooks} > checks a generic HMAC-SHA256 signature, with or without its prefix`,
  ],
  'TriggerData.parameters.signed': [
    `${webhooks} > refuses every delivery of a signed trigger until its secret is set, and after it is removed`,
    `${webhooks} > accepts unsigned deliveries when the trigger says signed: false`,
  ],
  'TriggerWebhookSecret.secret': [
    `${webhooks} > refuses every delivery of a signed trigger until its secret is set, and after it is removed`,
    `${webhooks} > gives a webhook to triggers of connector webhook only`,
  ],
  'TimeSchedule.oneshot': `${ticker} > ticks a oneshot on time, once per tick`,
  'TimeSchedule.periodic': [
    `${ticker} > ticks a periodic schedule on time, once per tick`,
    'test/api/time-triggers.test.ts > run their pipelines at each tick of their schedule',
  ],
  'TimeSchedule.hourly': HOURLY,
  'HourlySchedule.minute': HOURLY,
  'HourlySchedule.second': `${schedules} > nextTick > hourly later this hour`,
  'TimeSchedule.daily': DAILY,
  'DailySchedule.hour': DAILY,
  'DailySchedule.minute': DAILY,
  'DailySchedule.second': DAILY,
  'TimeSchedule.weekly': WEEKLY,
  'WeeklySchedule.day': WEEKLY,
  'WeeklySchedule.hour': WEEKLY,
  'WeeklySchedule.minute': `${schedules} > nextTick > weekly on sunday, the last day`,
  'WeeklySchedule.second': `${properties} > ticks a weekly schedule at its second`,
  'TimeSchedule.missed': [
    `${ticker} > handles ticks missed while stopped with skip`,
    `${ticker} > handles ticks missed while stopped with run_once (the default)`,
    `${ticker} > handles ticks missed while stopped with run_all`,
  ],

  'CustomEvent.event_time': [
    STARTS_ON_EVENT,
    `${properties} > dates an event sent without event_time at the time of the request`,
  ],
  'CustomEvent.connector': `${events} > accepts only the custom connector`,
  'CustomEvent.name': `${properties} > fires a trigger only for the events of its name`,
  'CustomEvent.data': [STARTS_ON_EVENT, `${events} > filters with is_equal_to`],

  'IdentitySpec.name': [
    IDENTITY_CREATED,
    `${identities} > refuses a name taken in the project, or one giving the same variables`,
  ],
  'IdentitySpec.kind': [
    IDENTITY_VARIABLES,
    `${identities} > checks the members of each kind, reporting every problem`,
  ],
  'IdentitySpec.description': IDENTITY_CREATED,
  'IdentitySpec.data': [IDENTITY_VARIABLES, IDENTITY_MASKED],
  'IdentityData.value': IDENTITY_VARIABLES,
  'IdentityData.username': IDENTITY_VARIABLES,
  'IdentityData.password': IDENTITY_VARIABLES,
  'IdentityData.token': IDENTITY_VARIABLES,
  'IdentityData.private_key': [IDENTITY_VARIABLES, IDENTITY_MASKED],
  'IdentityData.known_hosts': IDENTITY_VARIABLES,
};

/**
 * What the spec documents and no test can assert, because the server does not do it (yet):
 * each with the reason. The coverage test prints them and lets them pass. A property may be
 * both covered above (for what is tested) and listed here (for what is not).
 */
export const KNOWN_GAPS: Readonly<Record<string, string>> = {};
