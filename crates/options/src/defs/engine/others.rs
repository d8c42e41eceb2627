//! The engines with one option of their own: mtd, nbd and nfs.

use crate::table::{Category as C, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // mtd, nbd
    O::new("skip_bad", BOOL, C::Engine, "Skip known bad blocks").def("0").engines(&["mtd"]).to(|s, v| Ok(s.engine.mtd.skip_bad = v.flag())),
    O::new("uri", K::Str, C::Engine, "Name of NBD URI").engines(&["nbd"]).to(|s, v| Ok(s.engine.nbd.uri = v.written())),
    O::new("nfs_url", K::Str, C::Engine, "URL in libnfs format, eg nfs://<server|ipv4|ipv6>/path[?arg=val[&arg=val]*]").engines(&["nfs"]).to(|s, v| Ok(s.engine.nfs.url = v.written())),
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

/// nfs's options: the export, as a libnfs URL.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NfsOpts {
    pub url: Option<String>,
}

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=mtd skip_bad=1", |s| s.engine.mtd.skip_bad),
            ("ioengine=nbd uri=nbd://h/d", |s| s.engine.nbd.uri.as_deref() == Some("nbd://h/d")),
            ("ioengine=nfs nfs_url=nfs://h/e", |s| s.engine.nfs.url.as_deref() == Some("nfs://h/e")),
        ]);
    }
}
