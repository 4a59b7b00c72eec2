// apps/cli/output_paths.h — checking that --save and --log can be written, before training.
//
// A checkpoint is first written after a whole epoch (minutes on Fashion-MNIST); a typo in
// its directory should not cost those minutes. So `ember train` checks every output path
// at start: its directory exists, is a directory and is writable, and the path itself is
// not a directory. (--save writes through a temporary file in the same directory and a
// rename, so the directory's permission is what matters.)
#pragma once

#include <string>

namespace ember::cli {

// IOError "--save out/model.st: directory out does not exist" and the like.
void check_output_path(const std::string& path, const std::string& flag);

// Whether two paths name the same existing file (false when either does not exist).
bool same_file(const std::string& a, const std::string& b);

}  // namespace ember::cli
