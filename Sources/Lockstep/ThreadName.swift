import CRealtime

/// The name the operating system shows for a thread (`top -H`, `ps -L`, `/proc/PID/task/*/comm`,
/// gdb, perf).
///
/// Foundation's `Thread.name` does not reach the system on Linux, so each of Lockstep's threads
/// names itself with this as the first thing it runs.
public enum ThreadName {
    /// Names the calling thread `name`, cut to the 15 bytes Linux keeps (at a character boundary).
    public static func setCurrent(_ name: String) {
        var bytes = 0
        var kept = ""
        for character in name {
            let size = character.utf8.count
            guard bytes + size <= 15 else { break }
            bytes += size
            kept.append(character)
        }
        lockstep_set_thread_name(kept)
    }
}
