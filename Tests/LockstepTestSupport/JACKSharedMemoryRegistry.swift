import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Repairs jackd2's shared-memory registry after servers that died without cleaning up.
///
/// jackd2 keeps a registry in `/dev/shm/jack-shm-registry`: a header with room for only
/// **8 servers** (`MAX_SERVERS`), then 256 segment entries. A server that is killed (`SIGKILL`,
/// a crash, a hung shutdown) keeps its header slot and its segments (about 100 MB of tmpfs).
/// jackd reclaims a dead server's slot only when a server *of the same name* starts again, and
/// dead segments only when some server starts or stops. The fixtures name every server uniquely,
/// so without this repair eight server-death tests would leave the machine unable to start any
/// JACK server ("Too many servers already active").
///
/// ``reclaimDeadServers()`` does what jackd does for one name, for all of them: under jackd's own
/// registry lock (SysV semaphore `0x282929`, with `SEM_UNDO`), it clears every server slot and
/// every segment entry whose process no longer exists, and unlinks those segments. It touches
/// nothing unless the registry's magic number and sizes match the layout it knows
/// (jackd2 1.9.x, POSIX shared memory).
enum JACKSharedMemoryRegistry {
    static let path = "/dev/shm/jack-shm-registry"
    static let semaphoreKey: key_t = 0x282929
    static let magic: UInt32 = 0x4a41_434b  // "JACK"
    static let maxServers = 8
    /// `jack_shm_header_t` up to its server array: magic, protocol, type, size, hdr_len, entry_len.
    static let serverArrayOffset = 24
    /// `jack_shm_server_t`: pid_t plus a 257-byte name, padded to 4.
    static let serverSlotLength = 264
    /// Where `allocator`, `size` and `id` sit in `jack_shm_registry_t`.
    static let allocatorOffset = 4
    static let sizeOffset = 8
    static let idOffset = 12

    /// A summary of one repair, for tests and logs.
    struct Repair: Equatable {
        /// Server slots cleared.
        var servers = 0
        /// Segment entries cleared (and segments unlinked).
        var segments = 0
    }

    /// Clears the registry's server slots and segment entries of processes that no longer exist,
    /// unlinking those segments. Returns what it cleared; nothing when the registry is missing,
    /// unknown, or its lock is busy for more than a second.
    @discardableResult
    static func reclaimDeadServers() -> Repair {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return Repair() }
        defer { close(fd) }
        guard let lock = RegistryLock() else { return Repair() }
        defer { lock.unlock() }

        var stat = stat()
        guard fstat(fd, &stat) == 0, stat.st_size > 0, stat.st_size <= 1 << 20 else { return Repair() }
        var bytes = [UInt8](repeating: 0, count: Int(stat.st_size))
        guard bytes.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            return Repair()
        }
        func int32(_ offset: Int) -> Int32 {
            guard offset >= 0, offset + 4 <= bytes.count else { return 0 }
            return bytes[offset..<offset + 4].reversed().reduce(Int32(0)) { $0 << 8 | Int32($1) }
        }
        let headerLength = Int(int32(16))
        let entryLength = Int(int32(20))
        guard UInt32(bitPattern: int32(0)) == magic, int32(8) == 1,  // shm_POSIX
              headerLength == serverArrayOffset + maxServers * serverSlotLength,
              entryLength >= idOffset + 16, entryLength <= 1024,
              Int(int32(12)) == bytes.count else { return Repair() }

        func isDead(_ pid: Int32) -> Bool { pid > 0 && kill(pid, 0) != 0 && errno == ESRCH }
        func clear(_ offset: Int, _ length: Int) {
            let zeros = [UInt8](repeating: 0, count: length)
            _ = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, length, off_t(offset)) }
        }

        var repair = Repair()
        for slot in 0..<maxServers {
            let offset = serverArrayOffset + slot * serverSlotLength
            if isDead(int32(offset)) {
                clear(offset, serverSlotLength)
                repair.servers += 1
            }
        }
        var offset = headerLength
        while offset + entryLength <= bytes.count {
            if isDead(int32(offset + allocatorOffset)) {
                let id = String(decoding: bytes[(offset + idOffset)..<(offset + entryLength)].prefix { $0 != 0 },
                                as: UTF8.self)
                let name = id.hasPrefix("/") ? String(id.dropFirst()) : id
                if name.hasPrefix("jack-"), !name.contains("/"), name != "jack-shm-registry" {
                    unlink("/dev/shm/" + name)
                }
                // Keep `index`; clear allocator, size and id, as jack_release_shm_entry does.
                clear(offset + allocatorOffset, entryLength - allocatorOffset)
                repair.segments += 1
            }
            offset += entryLength
        }
        return repair
    }

    /// The process ids in the registry's server slots (live or dead), without locking.
    static func serverProcessIDs() -> [Int32] {
        guard let data = FileManager.default.contents(atPath: path),
              data.count >= serverArrayOffset + maxServers * serverSlotLength else { return [] }
        let bytes = [UInt8](data)
        guard bytes[0..<4].reversed().reduce(UInt32(0), { $0 << 8 | UInt32($1) }) == magic else { return [] }
        return (0..<maxServers).compactMap { slot in
            let offset = serverArrayOffset + slot * serverSlotLength
            let pid = bytes[offset..<offset + 4].reversed().reduce(Int32(0)) { $0 << 8 | Int32($1) }
            return pid == 0 ? nil : pid
        }
    }

    /// jackd's registry lock: one SysV semaphore, taken with `SEM_UNDO` so a crash releases it.
    private struct RegistryLock {
        let id: Int32

        /// Takes the lock, polling for up to a second; nil if the semaphore does not exist (no
        /// jackd ran since boot, so nothing can need repair) or stays busy.
        init?() {
            let id = semget(JACKSharedMemoryRegistry.semaphoreKey, 0, 0)
            guard id >= 0 else { return nil }
            var operation = sembuf(sem_num: 0, sem_op: -1, sem_flg: Int16(SEM_UNDO | IPC_NOWAIT))
            let locked = JACKFixtureSupport.poll(timeout: 1, interval: 0.001) {
                semop(id, &operation, 1) == 0
            }
            guard locked else { return nil }
            self.id = id
        }

        func unlock() {
            var operation = sembuf(sem_num: 0, sem_op: 1, sem_flg: Int16(SEM_UNDO))
            _ = semop(id, &operation, 1)
        }
    }
}
