#include "site_names.h"

#include <fstream>
#include <sstream>

#include "vcx/trace_format.h"

namespace vcx::trace {

SiteNames::SiteNames(const std::string& trace_dir, Rank rank) {
  std::ifstream in(trace_dir + "/" + rank_maps_name(rank));
  if (!in) return;
  std::stringstream text;
  text << in.rdbuf();
  symbols_ = std::make_unique<Symbolizer>(text.str());
}

const std::string& SiteNames::name(std::uint64_t address) {
  auto [it, added] = names_.try_emplace(address);
  if (added)
    it->second = symbols_ ? describe(symbols_->resolve_program_call(address), address)
                          : describe(SourceLocation{}, address);
  return it->second;
}

}  // namespace vcx::trace
