// nn/atomic_file.h — replacing a file all at once: the write path under ember::save.
//
// A checkpoint is written to a temporary file next to its target, made durable (fsync)
// and renamed over the target, so a reader — or a crash — sees the old file or the new
// one, never half of each. Three details make that safe on a real file system:
//   - symlinks are followed to the file they name: rename() would otherwise replace the
//     link itself with a regular file (torch.save, which opens the path, writes through a
//     link; so does ember);
//   - only a regular file (or nothing) may be replaced: a rename onto /dev/null or a FIFO
//     would replace the device node or pipe itself (as root, /dev/null would become a
//     checkpoint), so such targets are refused with IOError;
//   - a process killed during a write (SIGKILL, power loss) leaves its temporary file
//     behind; the next write to the same target removes the ones whose writer no longer
//     runs. Only names of the exact pattern ".<name>.tmp.<pid>.<n>" are touched.
#pragma once

#include <string>

namespace ember {

// `path` with every symlink followed, up to the final target (which need not exist yet).
// IOError for a symlink loop.
std::string resolve_symlinks(const std::string& path);

// Checks now that write_file_atomically(path, ...) could succeed: the resolved target is
// a regular file or absent, and its directory accepts the real temporary name (created
// and removed again), which also catches names too long once the suffix is added and
// directories that refuse new files (/proc, /sys, read-only mounts). IOError naming the
// problem otherwise.
void check_atomic_write(const std::string& path);

// Writes `bytes` to `path` atomically (see the top of this file). IOError on failure; the
// temporary file is removed then.
void write_file_atomically(const std::string& path, const std::string& bytes);

// Whether `file_name` is a temporary name of a write to `target_name` (both plain names,
// no directory): ".<target_name>.tmp.<digits>.<digits>". Exposed for tests.
bool is_temporary_name_of(const std::string& file_name, const std::string& target_name);

}  // namespace ember
