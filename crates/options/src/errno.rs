//! errno names as `ignore_error` accepts them (Linux numbers, as fio reads them).

/// Linux's errno names and numbers (asm-generic, which x86-64 and arm64 share).
const NAMES: &[(&str, i32)] = &[
    ("EPERM", 1),
    ("ENOENT", 2),
    ("ESRCH", 3),
    ("EINTR", 4),
    ("EIO", 5),
    ("ENXIO", 6),
    ("E2BIG", 7),
    ("ENOEXEC", 8),
    ("EBADF", 9),
    ("ECHILD", 10),
    ("EAGAIN", 11),
    ("EWOULDBLOCK", 11),
    ("ENOMEM", 12),
    ("EACCES", 13),
    ("EFAULT", 14),
    ("ENOTBLK", 15),
    ("EBUSY", 16),
    ("EEXIST", 17),
    ("EXDEV", 18),
    ("ENODEV", 19),
    ("ENOTDIR", 20),
    ("EISDIR", 21),
    ("EINVAL", 22),
    ("ENFILE", 23),
    ("EMFILE", 24),
    ("ENOTTY", 25),
    ("ETXTBSY", 26),
    ("EFBIG", 27),
    ("ENOSPC", 28),
    ("ESPIPE", 29),
    ("EROFS", 30),
    ("EMLINK", 31),
    ("EPIPE", 32),
    ("EDOM", 33),
    ("ERANGE", 34),
    ("EDEADLK", 35),
    ("ENAMETOOLONG", 36),
    ("ENOLCK", 37),
    ("ENOSYS", 38),
    ("ENOTEMPTY", 39),
    ("ELOOP", 40),
    ("ENOMSG", 42),
    ("EIDRM", 43),
    ("ENOSTR", 60),
    ("ENODATA", 61),
    ("ETIME", 62),
    ("ENOSR", 63),
    ("ENOLINK", 67),
    ("EPROTO", 71),
    ("EBADMSG", 74),
    ("EOVERFLOW", 75),
    ("EILSEQ", 84),
    ("EUSERS", 87),
    ("ENOTSOCK", 88),
    ("EMSGSIZE", 90),
    ("EOPNOTSUPP", 95),
    ("ENOTSUP", 95),
    ("EADDRINUSE", 98),
    ("ENETDOWN", 100),
    ("ENETUNREACH", 101),
    ("ECONNABORTED", 103),
    ("ECONNRESET", 104),
    ("ENOBUFS", 105),
    ("ENOTCONN", 107),
    ("ETIMEDOUT", 110),
    ("ECONNREFUSED", 111),
    ("EHOSTUNREACH", 113),
    ("EALREADY", 114),
    ("EINPROGRESS", 115),
    ("ESTALE", 116),
    ("EREMOTEIO", 121),
    ("EDQUOT", 122),
    ("ENOMEDIUM", 123),
    ("EMEDIUMTYPE", 124),
    ("ECANCELED", 125),
    ("EKEYEXPIRED", 127),
    ("EOWNERDEAD", 130),
    ("ENOTRECOVERABLE", 131),
    ("ERFKILL", 132),
    ("EHWPOISON", 133),
];

/// The number of an errno name (`EIO`) or of a decimal number (`5`).
pub fn parse(word: &str) -> Option<i32> {
    let w = word.trim();
    if let Some(&(_, n)) = NAMES.iter().find(|(name, _)| *name == w) {
        return Some(n);
    }
    w.parse::<i32>().ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_and_numbers() {
        assert_eq!(super::parse("EIO"), Some(5));
        assert_eq!(super::parse(" ENOSPC "), Some(28));
        assert_eq!(super::parse("122"), Some(122));
        assert_eq!(super::parse("0x5"), None);
        assert_eq!(super::parse("EFOO"), None);
        assert_eq!(super::parse("-1"), None);
    }
}
