#include "types/value.h"

namespace tessera {

bool Elements::operator==(const Elements& o) const { return items == o.items; }
bool Entries::operator==(const Entries& o) const { return items == o.items; }

}  // namespace tessera
