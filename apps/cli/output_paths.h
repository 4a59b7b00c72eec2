// apps/cli/output_paths.h — checking --save and --log before training: writable, and harmless.
//
// A checkpoint is first written after a whole epoch (minutes on Fashion-MNIST); a typo in
// its directory should not cost those minutes, and an output path must never destroy
// something. So `ember train` checks every output path at start:
//   - its directory exists, is a directory and is writable (IOError, exit code 1);
//   - --save: the target — after symlinks, which a checkpoint is written through — is a
//     regular file or absent. A checkpoint replaces its file (temporary file + rename), so
//     --save /dev/null would replace the device node itself (as root) and a FIFO would
//     become a file: refused (UsageError, exit code 2). The real temporary name is then
//     created and removed once, so a name too long once ".tmp.<pid>.<n>" is added, or a
//     directory that refuses new files (/proc, /sys, read-only mounts), fails now;
//   - --log: the log is opened and appended to, never replaced, so besides a regular file a
//     character device or a FIFO (/dev/stdout, a pipe to a log reader) is fine; a write
//     error there is caught as on a file (metrics_log.h). Directories, block devices and
//     sockets are refused;
//   - no output is an input or the other output (check_distinct_paths): --log or --save
//     naming the --data file, an IDX file of the data set, the --resume checkpoint (for
//     --log), or each other, would overwrite it. Paths are compared as files (after
//     symlinks, hard links included), so "./a", "dir/../a" and a link to a are all "a".
//     --save equal to --resume is allowed: it is how a run continues in place (the
//     checkpoint is read completely before anything is written, and replaced atomically).
//     --save-best must differ from all of them, --resume included (the best model would
//     replace the latest one, or the checkpoint the run started from).
#pragma once

#include <string>

#include "options.h"

namespace ember::cli {

// IOError "--save out/model.st: directory out does not exist" and the like; UsageError
// for a target that is not a regular file. `flag`: --save, or --save-best (the same rules:
// both are checkpoints written atomically).
void check_save_path(const std::string& path, const std::string& flag = "--save");
void check_log_path(const std::string& path);

// UsageError "--log data.csv is the same file as the --data file data.csv: the metrics log
// would overwrite it; choose another path" (the roles named as the flags say them).
void check_distinct_paths(const TrainOptions& options);

// `exit_code`, or 1 after "ember: error: cannot write to stdout (REASON)" on stderr when
// what the command printed did not reach stdout (`ember train > out.txt` on a full disk):
// a summary that was lost is a failed run, not a success.
int check_stdout_written(int exit_code);

// Whether two paths name the same existing file (false when either does not exist).
bool same_file(const std::string& a, const std::string& b);

}  // namespace ember::cli
