/** Whether `promtool` (Debian's `prometheus` package, which `.ci/run` installs) can be run here. */
import { spawnSync } from 'node:child_process';

/** True when `promtool --version` runs: the tests that need it skip, saying why, when it does not. */
export const HAVE_PROMTOOL = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;

/** The skip reason of a test that needs promtool, or `false` when it can run. */
export const NEEDS_PROMTOOL: string | false = HAVE_PROMTOOL
  ? false
  : "promtool is not installed (.ci/run installs Debian's prometheus package)";
