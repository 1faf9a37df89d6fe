/**
 * Stopping processes by pid (never by name) and reading daemons' pidfiles: the sandbox's own
 * functions (src/sandbox/processes.ts), so tests and the sandbox agree on what "gone" means (a
 * zombie counts as gone) and on SIGTERM, a grace period, then SIGKILL.
 */
export { isAlive, readPidFile, stopPid } from '../../src/sandbox/processes.js';
