//! rbd and rados (Ceph), with fiox's own Ceph options.

use crate::table::{Category as C, Kind as K, OptDef as O, TimeUnit};

const BOOL: K = K::Bool;

#[rustfmt::skip]
// Binders write `Ok(s.field = value)`: the assignment is the point, so clippy's unit_arg is off.
#[allow(clippy::unit_arg)]
pub(in crate::defs) static DEFS: &[O] = &[
    // Ceph (fio's order and words in --enghelp=rados and --enghelp=rbd)
    O::new("clustername", K::Str, C::Engine, "Cluster name for ceph").engines(&["rados", "rbd"]).to(|s, v| Ok(s.engine.ceph.clustername = v.written())),
    O::new("rbdname", K::Str, C::Engine, "RBD name for RBD engine").engines(&["rbd"]).to(|s, v| Ok(s.engine.ceph.rbdname = v.written())),
    O::new("pool", K::Str, C::Engine, "Ceph pool name to benchmark against")
        .engines(&["rados", "rbd"])
        .engine_help(&[("rbd", "Name of the pool hosting the RBD for the RBD engine")]).to(|s, v| Ok(s.engine.ceph.pool = v.written())),
    O::new("clientname", K::Str, C::Engine, "Name of the ceph client to access RADOS engine")
        .engines(&["rados", "rbd"])
        .engine_help(&[("rbd", "Name of the ceph client to access the RBD for the RBD engine")]).to(|s, v| Ok(s.engine.ceph.clientname = v.written())),
    // fio's rbd engine has no `conf` (it reads `$CEPH_CONF` or the default places only).
    O::new("conf", K::Str, C::Engine, "Path of the ceph configuration file").engines(&["rados"]).extra_engines(&["rbd"]).to(|s, v| Ok(s.engine.ceph.conf = v.written())),
    O::new("busy_poll", BOOL, C::Engine, "Busy poll for completions instead of sleeping").def("0").engines(&["rados", "rbd"]).to(|s, v| Ok(s.engine.ceph.busy_poll = v.flag())),
    O::new("touch_objects", BOOL, C::Engine, "Touch (create) objects on start").def("1").engines(&["rados"]).to(|s, v| Ok(s.engine.ceph.touch_objects = v.flag())),
    // fiox's own Ceph options: general rows (not the engines'), so that --enghelp=rbd and
    // --enghelp=rados stay fio's; refused with any other engine.
    O::new("namespace", K::Str, C::Engine, "fiox: the RADOS namespace of the rbd image or the rados objects (rbd, rados)").to(|s, v| Ok(s.engine.ceph.namespace = v.written())),
    O::new("ceph_connect_timeout", K::Time { unit: TimeUnit::Sec }, C::Engine, "fiox: how long to wait for the Ceph monitors (rbd, rados; default: the configuration's client_mount_timeout if it sets one, else 60 s)").to(|s, v| Ok(s.engine.ceph.connect_timeout_us = Some(v.time()))),
    O::new("ceph_shared_client", BOOL, C::Engine, "fiox: one librados client (one monitor session, one set of OSD connections) for all jobs of this process with the same cluster, client, pool and namespace, instead of one per job as fio (rbd, rados)").def("0").to(|s, v| Ok(s.engine.ceph.shared_client = v.flag())),
    O::new("rbd_shared_handle", BOOL, C::Engine, "fiox: one open image (one exclusive-lock owner, one librbd cache) for all jobs of this process on the same image, instead of one per job as fio; implies ceph_shared_client (rbd)").def("0").to(|s, v| Ok(s.engine.ceph.shared_handle = v.flag())),
    O::new("ceph_stall_warn", K::Time { unit: TimeUnit::Sec }, C::Engine, "fiox: when no I/O completes for this long with I/O outstanding, say so on stderr with the oldest I/O's age and the cluster's health from the monitors (rbd, rados; 0: never)").def("10").to(|s, v| Ok(s.engine.ceph.stall_warn_us = v.time())),
];

/// The options of fio's `rbd` and `rados` engines, with fio 3.33's defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CephOpts {
    /// The cluster's name (`clustername`): picks `$cluster.conf` and the full client name.
    pub clustername: Option<String>,
    /// The client (`clientname`), `admin` when unset.
    pub clientname: Option<String>,
    /// The configuration file (`conf`; for rbd a fiox extension); unset, librados's search (`$CEPH_CONF`, then
    /// `/etc/ceph/$cluster.conf`, `~/.ceph/$cluster.conf`, `./$cluster.conf`).
    pub conf: Option<String>,
    pub pool: Option<String>,
    /// rbd: the image (`rbdname`).
    pub rbdname: Option<String>,
    /// Spin for completions instead of sleeping (`busy_poll`; rbd only, as in fio).
    pub busy_poll: bool,
    /// rados: create every object when the job starts (`touch_objects`, default 1).
    pub touch_objects: bool,
    /// fiox: the RADOS namespace of the image or objects (`namespace`).
    pub namespace: Option<String>,
    /// fiox: how long to wait for the monitors, microseconds (`ceph_connect_timeout`); unset,
    /// the configuration's `client_mount_timeout` if it sets one, else 60 s.
    pub connect_timeout_us: Option<u64>,
    /// fiox: one librados client for all jobs of the process that agree on it
    /// (`ceph_shared_client`).
    pub shared_client: bool,
    /// fiox: one open rbd image for all jobs of the process on it (`rbd_shared_handle`).
    pub shared_handle: bool,
    /// fiox: the stall watchdog's threshold, microseconds (`ceph_stall_warn`; 0: off).
    pub stall_warn_us: u64,
    /// The keyring file (`--keyring` of `fiox rbd`/`fiox rados`; no job option): replaces the
    /// configuration's `keyring`.
    pub keyring: Option<String>,
}

#[cfg(test)]
mod tests {
    use crate::spec::bind::check::lands;

    #[test]
    fn rows_land_in_their_fields() {
        lands(&[
            ("ioengine=rbd clustername=c rbdname=i pool=p clientname=u conf=f busy_poll=1", |s| {
                let o = &s.engine.ceph;
                o.clustername.as_deref() == Some("c")
                    && o.rbdname.as_deref() == Some("i")
                    && o.pool.as_deref() == Some("p")
                    && o.clientname.as_deref() == Some("u")
                    && o.conf.as_deref() == Some("f")
                    && o.busy_poll
            }),
            ("ioengine=rbd namespace=n ceph_connect_timeout=5 ceph_shared_client=1 rbd_shared_handle=1 ceph_stall_warn=3", |s| {
                let o = &s.engine.ceph;
                o.namespace.as_deref() == Some("n")
                    && o.connect_timeout_us == Some(5_000_000)
                    && o.shared_client
                    && o.shared_handle
                    && o.stall_warn_us == 3_000_000
            }),
            ("ioengine=rados touch_objects=0", |s| !s.engine.ceph.touch_objects),
            ("", |s| s.engine.ceph.touch_objects && s.engine.ceph.stall_warn_us == 10_000_000 && s.engine.ceph.connect_timeout_us.is_none()),
        ]);
    }
}
