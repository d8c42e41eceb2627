//! Connections and images shared by the jobs of one fiox process (fiox's
//! `ceph_shared_client=1` and `rbd_shared_handle=1`). Each job normally makes its own librados
//! client (as fio 3.33 does): with many jobs that is many monitor sessions, OSD connections
//! and, for an rbd image, clients passing the exclusive lock around. A shared client is one
//! connection (one session, one set of OSD sockets) for every job that asks for it with the
//! same cluster, client, configuration, pool, namespace and cache setting; a shared image
//! handle is also one open image, so its exclusive lock stays with one owner and librbd's
//! cache is one cache.
//!
//! The registry holds weak references: the connection or image goes when the last job using
//! it drops it, as an unshared one would.

use std::sync::{Arc, Mutex, Weak};

use fiox_options::CephOpts;

use super::{Image, Pool};

/// What makes two jobs' connections interchangeable.
type Key = (String, Option<String>, Option<String>, Option<String>, Option<String>, Option<String>, bool);

fn key(engine: &str, opts: &CephOpts, direct: bool) -> Key {
    (
        engine.to_string(),
        opts.clustername.clone(),
        opts.clientname.clone(),
        opts.conf.clone(),
        opts.pool.clone(),
        opts.namespace.clone(),
        direct,
    )
}

static POOLS: Mutex<Vec<(Key, Weak<Pool>)>> = Mutex::new(Vec::new());
/// An image is the connection's key and the image's name.
type ImageKey = (Key, String);

static IMAGES: Mutex<Vec<(ImageKey, Weak<Image>)>> = Mutex::new(Vec::new());

/// The job's connection and pool: a new one, or under `ceph_shared_client=1` (implied by
/// `rbd_shared_handle=1`) the one another job of this process already holds.
pub(crate) fn pool(engine: &str, opts: &CephOpts, direct: bool) -> Result<Arc<Pool>, String> {
    if !(opts.shared_client || opts.shared_handle) {
        return Pool::connect(engine, opts, direct).map(Arc::new);
    }
    let key = key(engine, opts, direct);
    // Held while connecting, so that jobs starting together make one connection, not several.
    let mut reg = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|(_, w)| w.strong_count() > 0);
    if let Some(p) = reg.iter().find(|(k, _)| *k == key).and_then(|(_, w)| w.upgrade()) {
        return Ok(p);
    }
    let p = Arc::new(Pool::connect(engine, opts, direct)?);
    reg.push((key, Arc::downgrade(&p)));
    Ok(p)
}

/// The job's open image: its own, or under `rbd_shared_handle=1` the one other jobs of this
/// process with the same image already hold.
pub(crate) fn image(opts: &CephOpts, direct: bool, name: &str) -> Result<Arc<Image>, String> {
    if !opts.shared_handle {
        return Image::open(pool("rbd", opts, direct)?, name).map(Arc::new);
    }
    let key = (key("rbd", opts, direct), name.to_string());
    let mut reg = IMAGES.lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|(_, w)| w.strong_count() > 0);
    if let Some(i) = reg.iter().find(|(k, _)| *k == key).and_then(|(_, w)| w.upgrade()) {
        return Ok(i);
    }
    let i = Arc::new(Image::open(pool("rbd", opts, direct)?, name)?);
    reg.push((key, Arc::downgrade(&i)));
    Ok(i)
}
