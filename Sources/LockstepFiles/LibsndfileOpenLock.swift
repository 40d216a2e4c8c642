import CSndfile

/// libsndfile keeps the error of a failed open in one process-wide variable (`sf_error(NULL)`),
/// which every open — failed or not, on any thread — resets. Lockstep opens files under one lock
/// and reads that error before letting go; code that calls libsndfile's `sf_open*` itself in the
/// same process should open under the same lock, or a failed open of Lockstep's may be reported
/// with another open's error (seen: a text file reported as damaged, error 0).
public enum LibsndfileOpenLock {
    /// Runs `open` (one `sf_open`, `sf_open_fd` or `sf_open_virtual` call) under Lockstep's open
    /// lock; when it fails, also the error it left (`sf_error(NULL)` and `sf_strerror(NULL)`).
    public static func open(_ open: () -> OpaquePointer?) -> (handle: OpaquePointer?, error: Int32, message: String) {
        var message = ""
        var code: Int32 = 0
        let (handle, _) = Sndfile.guardedOpen(path: "", forWriting: false) {
            let handle = open()
            if handle == nil {
                code = sf_error(nil)
                message = sf_strerror(nil).map { String(cString: $0) } ?? "unknown libsndfile error"
            }
            return handle
        }
        return (handle, code, message)
    }
}
