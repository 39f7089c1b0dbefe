// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the steps are shell code, with shell variables.
// The project the browser tests deploy: a command whose pipeline is a small graph (one task
// with two instances), a test that can fail once (its marker file says it did), coloured
// output, and a trigger on custom events.

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
