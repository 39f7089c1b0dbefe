export { test } from './fixtures.js';
export {
  lastLine,
  logEntries,
  type ProgramResult,
  type RunningProgram,
  runProgram,
  startProgram,
} from './program.js';
export { certificateFile, clientOf, type RunningServer, type ServerOptions, startServer } from './server.js';
export { type TempDirOptions, tempDirs } from './temp-dirs.js';
