// vcx-run's options as data: the table the command line, VCX_* variables and
// config files are read with, and the help text made from it.
#pragma once

#include <boost/program_options.hpp>

namespace vcx::launcher {

// "vcx-run [options] -n N PROGRAM [args...]": for --help and usage errors.
extern const char* const kSynopsis;

// Settings: keys of the command line, of VCX_* variables and of --config
// files alike.
boost::program_options::options_description settings_table();
// The command line's: the settings and a few more (--config, --option,
// --help, ...).
boost::program_options::options_description option_table();
// A config file's: the settings and a placement file's [placement] keys.
boost::program_options::options_description config_file_table();

}  // namespace vcx::launcher
