//! What fiox's run manifest says about a Ceph job (reference/ceph.md §9.1.5): the libraries'
//! versions, the cluster's fsid, the configuration file read, the client, the pool, the
//! image's geometry and features, librbd's effective cache settings, the image's written
//! extents or the job's objects, and the exclusive lock's owner. The planner asks before the
//! run (through the engines' `remote`, on the connection it makes anyway) and the manifest
//! asks again after it ([`probe`]), so that objects made or removed and the lock's owner can be
//! compared. Also [`health`]: the monitors' view of the cluster for the stall watchdog.

use std::time::Duration;

use fiox_options::CephOpts;

use super::{cstring, errno_text, ffi, Image, Pool};

/// An RBD image's geometry and features, as `rbd info` shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageFacts {
    pub name: String,
    pub size: u64,
    pub order: u32,
    pub object_size: u64,
    /// The RADOS objects' name prefix (`rbd_data.ID`).
    pub block_name_prefix: String,
    /// librbd's feature bits and their names (`layering`, `exclusive-lock`, ...).
    pub features: u64,
    pub feature_names: Vec<String>,
    pub stripe_unit: u64,
    pub stripe_count: u64,
}

/// One look at a Ceph job's cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// librados's C API version (`3.0.0`) and librbd's (`1.16.0`; empty for rados).
    pub rados_version: String,
    pub rbd_version: String,
    pub fsid: String,
    /// The configuration file librados read (empty: none found, all from the environment).
    pub conf: String,
    /// The client's full name (`client.admin`).
    pub client: String,
    pub pool: String,
    pub namespace: String,
    /// librbd's cache settings as the client sees them (configuration file and monitors).
    pub rbd_cache: Vec<(String, String)>,
    pub image: Option<ImageFacts>,
    /// rbd: the image's extents ever written (librbd's diff; whole objects with object-map).
    pub written: Option<Vec<(u64, u64)>>,
    /// rados: each of the job's objects and its size, `None` where it does not exist.
    pub objects: Vec<(String, Option<u64>)>,
    /// rbd: the exclusive lock's owners (librbd's cookies; empty when nobody holds it), or
    /// `None` where it cannot be known (the image lacks the exclusive-lock feature).
    pub lock_owners: Option<Vec<String>>,
}

/// librbd's feature bits (librbd.h's `RBD_FEATURE_*`), named as `rbd info` names them.
const FEATURES: [(u64, &str); 11] = [
    (1, "layering"),
    (2, "striping"),
    (4, "exclusive-lock"),
    (8, "object-map"),
    (16, "fast-diff"),
    (32, "deep-flatten"),
    (64, "journaling"),
    (128, "data-pool"),
    (256, "operations"),
    (512, "migrating"),
    (1024, "non-primary"),
];

const CACHE_KEYS: [&str; 5] =
    ["rbd_cache", "rbd_cache_policy", "rbd_cache_writethrough_until_flush", "rbd_cache_size", "rbd_cache_max_dirty"];

fn rados_version(lib: &ffi::Rados) -> String {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    unsafe { (lib.version)(&mut a, &mut b, &mut c) };
    format!("{a}.{b}.{c}")
}

/// The client's full name as librados builds it from `clientname` (`admin` → `client.admin`).
fn full_name(opts: &CephOpts) -> String {
    match opts.clientname.as_deref() {
        Some(n) if n.contains('.') => n.to_string(),
        Some(n) if !n.is_empty() => format!("client.{n}"),
        _ => "client.admin".to_string(),
    }
}

/// What the pool's connection says (everything but the image and the objects).
pub(crate) fn of_pool(pool: &Pool, opts: &CephOpts, rbd: bool) -> Facts {
    let mut f = Facts {
        rados_version: rados_version(pool.lib),
        fsid: pool.fsid().unwrap_or_default(),
        conf: pool.conf.clone(),
        client: pool.get("name").filter(|n| !n.is_empty()).unwrap_or_else(|| full_name(opts)),
        pool: pool.name.clone(),
        namespace: opts.namespace.clone().unwrap_or_default(),
        ..Facts::default()
    };
    if rbd {
        f.rbd_cache = CACHE_KEYS.iter().filter_map(|k| pool.get(k).map(|v| (k.to_string(), v))).collect();
    }
    f
}

/// What an open image adds: version, geometry, features, lock owners, and with `written` the
/// written extents (librbd's diff, which reads every object's existence without object-map).
pub(crate) fn of_image(image: &Image, name: &str, opts: &CephOpts, written: bool) -> Facts {
    let mut f = of_pool(&image.pool, opts, true);
    let lib = image.lib;
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    unsafe { (lib.version)(&mut a, &mut b, &mut c) };
    f.rbd_version = format!("{a}.{b}.{c}");
    // SAFETY: rbd_image_info_t is plain data; zeroed is a valid value.
    let mut info: ffi::ImageInfo = unsafe { std::mem::zeroed() };
    // SAFETY: an open image and an info struct of the size given.
    let _ = unsafe { (lib.stat)(image.image, &mut info, std::mem::size_of::<ffi::ImageInfo>()) };
    let (mut features, mut unit, mut count) = (0u64, 0u64, 0u64);
    // SAFETY: an open image and valid out-pointers, one per call.
    unsafe {
        (lib.get_features)(image.image, &mut features);
        (lib.get_stripe_unit)(image.image, &mut unit);
        (lib.get_stripe_count)(image.image, &mut count);
    }
    let prefix: Vec<u8> = info.block_name_prefix.iter().take_while(|&&b| b != 0).map(|&b| b as u8).collect();
    f.image = Some(ImageFacts {
        name: name.to_string(),
        size: image.size,
        order: info.order.max(0) as u32,
        object_size: image.object_size,
        block_name_prefix: String::from_utf8_lossy(&prefix).into_owned(),
        features,
        feature_names: FEATURES.iter().filter(|(bit, _)| features & bit != 0).map(|(_, n)| n.to_string()).collect(),
        stripe_unit: unit,
        stripe_count: count,
    });
    if written {
        f.written = image.written_extents(0, image.size).ok();
    }
    if features & 4 != 0 {
        f.lock_owners = lock_owners(image);
    }
    f
}

fn lock_owners(image: &Image) -> Option<Vec<String>> {
    let mut owners: [*mut std::ffi::c_char; 8] = [std::ptr::null_mut(); 8];
    let (mut mode, mut max) = (0, owners.len());
    // SAFETY: an open image, a valid mode out-pointer and an array of `max` pointers librbd
    // fills (each a string it allocates, freed by the cleanup call below).
    let r = unsafe { (image.lib.lock_get_owners)(image.image, &mut mode, owners.as_mut_ptr(), &mut max) };
    if r == -libc::ENOENT {
        return Some(Vec::new());
    }
    if r < 0 {
        return None;
    }
    let out = owners[..max]
        .iter()
        .filter(|p| !p.is_null())
        // SAFETY: librbd set these to NUL-terminated strings, valid until the cleanup.
        .map(|&p| unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
        .collect();
    // SAFETY: the `max` owners librbd returned, freed once.
    unsafe { (image.lib.lock_get_owners_cleanup)(owners.as_mut_ptr(), max) };
    Some(out)
}

/// The sizes of `names` in the pool (`None`: no such object); at most 4096 are looked up.
pub(crate) fn objects(pool: &Pool, names: &[String]) -> Vec<(String, Option<u64>)> {
    names
        .iter()
        .take(4096)
        .map(|n| {
            let size = cstring("object", n).ok().and_then(|c| pool.size(&c));
            (n.clone(), size)
        })
        .collect()
}

/// Looks at a Ceph job's cluster afresh (after its run): a connection of its own, as the
/// job's options describe it, whose every wait (monitors, OSDs) gives up after `timeout`;
/// `names` are a rados job's objects.
pub fn probe(
    engine: &str,
    opts: &CephOpts,
    direct: bool,
    names: &[String],
    timeout: Duration,
) -> Result<Facts, String> {
    let t = format!("{}", timeout.as_secs_f64().max(0.1));
    let extra = [("client_mount_timeout", t.clone()), ("rados_mon_op_timeout", t.clone()), ("rados_osd_op_timeout", t)];
    let pool = Pool::connect_with(engine, opts, direct, &extra)?;
    if engine == "rbd" {
        let name = opts.rbdname.clone().unwrap_or_default();
        ffi::rbd()?;
        let image = Image::open(pool, &name)?;
        return Ok(of_image(&image, &name, opts, false));
    }
    let mut f = of_pool(&pool, opts, false);
    f.objects = objects(&pool, names);
    Ok(f)
}

/// The monitors' one-line health summary (`HEALTH_OK`, `HEALTH_WARN 1 osds down ...`), asked
/// on a connection of its own that gives up after `timeout` (connecting and asking each).
pub fn health(engine: &str, opts: &CephOpts, timeout: Duration) -> Result<String, String> {
    let t = format!("{}", timeout.as_secs_f64().max(0.1));
    let pool = Pool::connect_cluster(
        engine,
        opts,
        String::new(),
        &[("client_mount_timeout", t.clone()), ("rados_mon_op_timeout", t)],
    )?;
    match pool.mon_command(r#"{"prefix": "health"}"#) {
        Ok((out, status)) => {
            let text = if out.trim().is_empty() { status } else { out };
            Ok(text.split_whitespace().collect::<Vec<_>>().join(" "))
        }
        Err((r, status)) => Err(format!("the monitors did not answer 'health': {} {status}", errno_text(r))),
    }
}
