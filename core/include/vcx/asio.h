// The one place Boost.Asio is included. Boost 1.74's asio uses std::exchange
// without including <utility>, which GCC 12 in C++20 mode does not pull in.
#pragma once

#include <utility>

#include <boost/asio.hpp>

namespace vcx {
namespace asio = boost::asio;
using error_code = boost::system::error_code;
}
