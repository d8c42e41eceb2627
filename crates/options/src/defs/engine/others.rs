//! The engines with one option of their own: mtd, nbd, libiscsi and nfs.

use crate::table::{Category as C, Kind as K, OptDef as O};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // mtd, nbd, libiscsi, nfs
    O::new("skip_bad", BOOL, C::Engine, "Skip known bad blocks").def("0").engines(&["mtd"]).to(|s, v| Ok(s.engine.mtd.skip_bad = v.flag())),
    O::new("uri", K::Str, C::Engine, "Name of NBD URI").engines(&["nbd"]).to(|s, v| Ok(s.engine.nbd.uri = v.written())),
    O::new("initiator", K::Str, C::Engine, "initiator name").def(DEFAULT_INITIATOR).engines(&["libiscsi"]).to(|s, v| Ok(s.engine.libiscsi.initiator = v.text())),
    O::new("nfs_url", K::Str, C::Engine, "URL in libnfs format, eg nfs://<server|ipv4|ipv6>/path[?arg=val[&arg=val]*]").engines(&["nfs"]).to(|s, v| Ok(s.engine.nfs.url = v.written())),
];

/// The iSCSI name fio 3.33's libiscsi engine logs in with unless `initiator=` says otherwise
/// (its `--enghelp=libiscsi,initiator`).
pub const DEFAULT_INITIATOR: &str = "iqn.2019-04.org.fio:fio";

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

/// libiscsi's options: the iSCSI name the initiator logs in with (targets may admit only some
/// names).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LibiscsiOpts {
    pub initiator: String,
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
            ("ioengine=libiscsi", |s| s.engine.libiscsi.initiator == super::DEFAULT_INITIATOR),
            ("ioengine=libiscsi initiator=iqn.2020-01.x:y", |s| s.engine.libiscsi.initiator == "iqn.2020-01.x:y"),
            ("ioengine=nfs nfs_url=nfs://h/e", |s| s.engine.nfs.url.as_deref() == Some("nfs://h/e")),
        ]);
    }
}
