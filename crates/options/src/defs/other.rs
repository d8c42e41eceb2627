//! fio options fiox does not implement yet; filled from fio 3.33's option list.

use crate::table::OptDef as O;

pub(super) static DEFS: &[O] = &[];
