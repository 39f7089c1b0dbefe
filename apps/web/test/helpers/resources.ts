// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the steps are shell code, with shell variables.
// The project the browser tests deploy: a command whose pipeline is a small graph (one task
// with two instances), a test that can fail once (its marker file says it did), coloured
// output, a trigger on custom events, a time trigger, and a command whose step waits for a
// file the test creates, prints a line, then waits for another (each wait a minute at most,
// then the step fails).

export const RESOURCES = [
  {
    type: 'command',
    version: 1,
    name: 'deploy',
    description: 'Build, test and publish a version.',
    data: {
      parameters: [
        { name: 'version', type: 'string', description: 'Version to deploy.', environment: 'VERSION' },
        {
          name: 'environment',
          type: 'string',
          values: ['staging', 'production'],
          default: 'staging',
          description: 'Where to deploy.',
          environment: 'DEPLOY_ENV',
        },
        {
          name: 'fail_once',
          type: 'boolean',
          default: false,
          description: 'Fail the tests once, until the marker file exists.',
          environment: 'FAIL_ONCE',
        },
        {
          name: 'marker',
          type: 'string',
          default: '',
          description: 'The marker file.',
          environment: 'MARKER',
        },
      ],
      pipelines: ['release'],
    },
  },
  {
    type: 'pipeline',
    version: 1,
    name: 'release',
    data: {
      tasks: [
        { task: 'build' },
        { task: 'test', dependencies: ['build'], nb_instances: 2 },
        { task: 'publish', dependencies: ['test'] },
      ],
    },
  },
  {
    type: 'pipeline',
    version: 1,
    name: 'check',
    data: { concurrent: true, tasks: [{ task: 'build' }] },
  },
  {
    type: 'task',
    version: 1,
    name: 'build',
    data: {
      steps: [{ label: 'Compile', code: 'printf \'\\033[32mbuilt %s\\033[0m\\n\' "${VERSION:-dev}"' }],
    },
  },
  {
    type: 'task',
    version: 1,
    name: 'test',
    data: {
      steps: [
        { label: 'Prepare', code: 'echo "testing ${VERSION:-dev} on ${DEPLOY_ENV:-nowhere}"' },
        {
          label: 'Run the tests',
          code: [
            'if [ "${FAIL_ONCE:-false}" = true ] && [ ! -e "$MARKER" ]; then',
            '  touch "$MARKER"',
            '  printf \'\\033[31mFAIL: flaky test on instance %s\\033[0m\\n\' "$PIPEWRIGHT_INSTANCE_ID"',
            '  exit 1',
            'fi',
            'echo "all tests passed"',
          ].join('\n'),
        },
      ],
    },
  },
  {
    type: 'task',
    version: 1,
    name: 'publish',
    data: { steps: [{ label: 'Publish', command: 'echo', arguments: ['published'] }] },
  },
  {
    type: 'command',
    version: 1,
    name: 'follow',
    description: 'Wait for a file, print a line, then wait for the release file.',
    data: {
      parameters: [
        {
          name: 'marker',
          type: 'string',
          description: 'The files waited for, without their suffix.',
          environment: 'MARKER',
        },
      ],
      pipelines: ['follow'],
    },
  },
  { type: 'pipeline', version: 1, name: 'follow', data: { tasks: [{ task: 'wait' }] } },
  {
    type: 'task',
    version: 1,
    name: 'wait',
    data: {
      steps: [
        {
          label: 'Wait for the release',
          code: [
            'wait_for() {',
            '  i=0; while [ ! -e "$1" ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; [ -e "$1" ]',
            '}',
            'wait_for "$MARKER.print" || exit 1',
            "printf '\\033[36mwaiting for the release\\033[0m\\n'",
            'wait_for "$MARKER.release" || exit 1',
            'echo released',
          ].join('\n'),
        },
      ],
    },
  },
  {
    type: 'trigger',
    version: 1,
    name: 'weekly-check',
    description: 'Checks the build every Sunday at 03:00 UTC.',
    data: {
      connector: 'time',
      event: 'tick',
      parameters: { weekly: { day: 'sunday', hour: 3 } },
      pipelines: ['check'],
    },
  },
  {
    type: 'trigger',
    version: 1,
    name: 'on-push',
    data: {
      connector: 'custom',
      event: 'push',
      filters: [{ path: '/branch', is_equal_to: 'main' }],
      pipelines: ['check'],
    },
  },
];
