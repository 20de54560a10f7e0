// Boost.Asio's and Boost.Beast's non-template code, compiled once here instead of in every
// translation unit that includes them (their separate-compilation modes: the
// BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION definitions that
// tpuemu_boost_net gives every target linking it). See docs/build-times.md.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
