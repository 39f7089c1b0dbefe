import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ContainerEngine } from '../../src/runner/index.js';

/**
 * The image the container tests run, made here: a root file system of /bin/busybox and its links,
 * and curl with its libraries (busybox's wget cannot talk TLS with the test server, nor check its
 * certificate).
 */
export const TEST_IMAGE = 'localhost/pw-test:latest';
/** A label of TEST_IMAGE that says what it holds: an image of another content is made again. */
const IMAGE_CONTENT = 'io.pipewright.test-image=busybox+curl';

const BUSYBOX = '/bin/busybox';
const CURL = '/usr/bin/curl';
const PODMAN = '/usr/bin/podman';

/**
 * Podman as these machines run it (no registry, crun failing): with runc, no default ulimits
 * (setrlimit is denied), cgroups managed directly (they are in hybrid mode). A file of the run,
 * shared by the test files, named in CONTAINERS_CONF.
 */
const CONTAINERS_CONF = `[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
`;

let engine: ContainerEngine | undefined;

/** Podman, set up as above, with the server's environment plus CONTAINERS_CONF. */
export function testEngine(): ContainerEngine {
  if (engine) return engine;
  const dir = join(tmpdir(), 'pipewright-test-podman');
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'containers.conf');
  writeFileSync(conf, CONTAINERS_CONF);
  const environment: Record<string, string> = { CONTAINERS_CONF: conf };
  for (const name of ['PATH', 'HOME'] as const) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  engine = { name: 'podman', path: PODMAN, environment };
  return engine;
}

/** Runs podman as the tests' engine does; its stdout, or throws with its stderr. */
export function podman(...args: string[]): string {
  const { path, environment } = testEngine();
  return execFileSync(path, args, { env: environment, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Why the container tests cannot run here (podman or busybox missing, or podman failing to run
 * a container), or undefined once TEST_IMAGE exists: imported once, then kept for later runs.
 */
export function podmanProblem(): string | undefined {
  if (!existsSync(PODMAN)) return `${PODMAN} is not installed (apt-get install podman runc catatonit)`;
  if (!existsSync(BUSYBOX)) return `${BUSYBOX} is not installed (apt-get install busybox-static)`;
  if (!existsSync(CURL)) return `${CURL} is not installed (apt-get install curl)`;
  try {
    ensureTestImage();
    podman('run', '--rm', '--init', '--network', 'none', TEST_IMAGE, 'true');
    return undefined;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr;
    return `podman cannot run a container here: ${stderr?.trim() || String(error)}`;
  }
}

function ensureTestImage(): void {
  const [name, value] = IMAGE_CONTENT.split('=');
  const inspected = spawnSync(
    testEngine().path,
    ['image', 'inspect', '--format', `{{index .Labels "${name}"}}`, TEST_IMAGE],
    { env: testEngine().environment, encoding: 'utf8' },
  );
  if (inspected.status === 0 && inspected.stdout.trim() === value) return;
  const dir = mkdtempSync(join(tmpdir(), 'pipewright-test-rootfs-'));
  try {
    const root = join(dir, 'rootfs');
    mkdirSync(join(root, 'bin'), { recursive: true });
    copyInto(root, BUSYBOX);
    const applets = execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const applet of applets) {
      if (applet !== 'busybox') symlinkSync('busybox', join(root, 'bin', applet));
    }
    for (const file of [CURL, ...sharedLibraries(CURL)]) copyInto(root, file);
    const archive = join(dir, 'rootfs.tar');
    execFileSync('tar', ['-C', root, '-cf', archive, '.']);
    podman('import', '--quiet', '--change', `LABEL ${IMAGE_CONTENT}`, archive, TEST_IMAGE);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The libraries a program loads, its loader included, as ldd lists them. */
function sharedLibraries(program: string): string[] {
  return [...execFileSync('ldd', [program], { encoding: 'utf8' }).matchAll(/(\/\S+) \(0x/g)].map(
    (match) => match[1] ?? '',
  );
}

/** Copies a host file to the same path under `root`, following links. */
function copyInto(root: string, file: string): void {
  mkdirSync(join(root, dirname(file)), { recursive: true });
  copyFileSync(file, join(root, file));
  chmodSync(join(root, file), 0o755);
}

/** The names of the containers carrying `label` (NAME=VALUE), running or not. */
export function containersLabelled(label: string): string[] {
  return podman('ps', '--all', '--filter', `label=${label}`, '--format', '{{.Names}}')
    .split('\n')
    .filter(Boolean);
}
