//! gfapi's and gfapi_async's options: which GlusterFS volume, through which server, and
//! whether jobs share one mount of it (fio's option names, `single-instance` with its dash).

use crate::table::{Category as C, Kind as K, OptDef as O};

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    O::new("volume", K::Str, C::Engine, "GlusterFS volume").engines(&["gfapi", "gfapi_async"]).to(|s, v| Ok(s.engine.gfapi.volume = v.written())),
    O::new("brick", K::Str, C::Engine, "GlusterFS brick to connect to").engines(&["gfapi", "gfapi_async"]).to(|s, v| Ok(s.engine.gfapi.brick = v.written())),
    O::new("single-instance", K::Bool, C::Engine, "Share one GlusterFS connection among the jobs").engines(&["gfapi", "gfapi_async"]).to(|s, v| Ok(s.engine.gfapi.single_instance = v.flag())),
];

/// gfapi's and gfapi_async's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GfapiOpts {
    /// The volume's name.
    pub volume: Option<String>,
    /// The server (host name or address) whose glusterd serves the volume's layout.
    pub brick: Option<String>,
    /// One mount per volume and server for all the jobs of a run.
    pub single_instance: bool,
}

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=gfapi volume=v brick=b single-instance=1", |s| {
                let o = &s.engine.gfapi;
                o.volume.as_deref() == Some("v") && o.brick.as_deref() == Some("b") && o.single_instance
            }),
            ("ioengine=gfapi_async volume=v", |s| !s.engine.gfapi.single_instance),
        ]);
    }
}
