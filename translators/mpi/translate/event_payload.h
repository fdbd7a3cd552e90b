// Reading an event's payload with its size checked.
#pragma once

#include <cstring>
#include <string>

#include "vcx/channel/event_record.h"
#include "vcx/plugin.h"

namespace vcx::mpi {

class Payload {
 public:
  Payload(const EventHeader& ev, ToolHost& host)
      : data_(reinterpret_cast<const std::uint8_t*>(&ev + 1)),
        size_(ev.payload_size),
        type_(ev.type),
        host_(host) {}

  template <class T>
  T as() const {
    if (size_ < sizeof(T))
      host_.fatal("mpi: event " + std::to_string(type_) +
                  " is too short (interceptor and translator from different vcx versions?)");
    T t;
    std::memcpy(&t, data_, sizeof(T));
    return t;
  }
  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::uint16_t type_;
  ToolHost& host_;
};

// Reads `count` items of T at `offset` bytes into a payload.
template <class T>
bool read_array(const std::uint8_t* payload, std::size_t size, std::size_t offset,
                std::size_t count, T* out) {
  if (offset + count * sizeof(T) > size) return false;
  if (count) std::memcpy(out, payload + offset, count * sizeof(T));
  return true;
}

}  // namespace vcx::mpi
