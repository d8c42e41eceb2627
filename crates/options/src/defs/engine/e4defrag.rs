//! e4defrag: ext4 online defragmentation.

use crate::table::{Category as C, Kind as K, OptDef as O};

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // e4defrag
    O::new("donorname", K::Str, C::Engine, "File whose blocks are swapped into the job's file (required)").engines(&["e4defrag"]).to(|s, v| Ok(s.engine.e4defrag.donorname = v.written())),
    O::new("inplace", K::Int { min: 0, max: 1 }, C::Engine, "Allocate and free the donor's space at each I/O instead of once").engines(&["e4defrag"]).to(|s, v| Ok(s.engine.e4defrag.inplace = v.int() == 1)),
];

/// e4defrag's options: the donor file and whether its space is allocated per I/O.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct E4defragOpts {
    pub donorname: Option<String>,
    pub inplace: bool,
    /// How much of the donor to allocate at start (`filesize`, its low end; 0: unset).
    pub donor_size: u64,
}

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=e4defrag donorname=d inplace=1 filesize=1m", |s| {
                let o = &s.engine.e4defrag;
                o.donorname.as_deref() == Some("d") && o.inplace && o.donor_size == 1 << 20
            }),
            ("", |s| !s.engine.e4defrag.inplace && s.engine.e4defrag.donor_size == 0),
        ]);
    }
}
