//! The engines with one to three options of their own: mtd, nbd and gfapi.

use crate::table::{Category as C, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // mtd, nbd, gfapi
    O::new("skip_bad", BOOL, C::Engine, "Skip known bad blocks").def("0").engines(&["mtd"]).to(|s, v| Ok(s.engine.mtd.skip_bad = v.flag())),
    O::new("uri", K::Str, C::Engine, "Name of NBD URI").engines(&["nbd"]).to(|s, v| Ok(s.engine.nbd.uri = v.written())),
    O::new("volume", K::Str, C::Engine, "GlusterFS volume").engines(&["gfapi", "gfapi_async"]).to(|s, v| Ok(s.engine.gfapi.volume = v.written())),
    O::new("brick", K::Str, C::Engine, "GlusterFS brick to connect to").engines(&["gfapi", "gfapi_async"]).to(|s, v| Ok(s.engine.gfapi.brick = v.written())),
    O::new("single-instance", BOOL, C::Engine, "Share one GlusterFS connection among the jobs").engines(&["gfapi", "gfapi_async"]).to(|s, v| Ok(s.engine.gfapi.single_instance = v.flag())),
];

/// mtd's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MtdOpts {
    pub skip_bad: bool,
}

/// nbd's options: the export.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NbdOpts {
    pub uri: Option<String>,
}

/// gfapi's and gfapi_async's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GfapiOpts {
    pub volume: Option<String>,
    pub brick: Option<String>,
    pub single_instance: bool,
}

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=mtd skip_bad=1", |s| s.engine.mtd.skip_bad),
            ("ioengine=nbd uri=nbd://h/d", |s| s.engine.nbd.uri.as_deref() == Some("nbd://h/d")),
            ("ioengine=gfapi volume=v brick=b single-instance=1", |s| {
                let o = &s.engine.gfapi;
                o.volume.as_deref() == Some("v") && o.brick.as_deref() == Some("b") && o.single_instance
            }),
        ]);
    }
}
