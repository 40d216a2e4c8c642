import CSndfile

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only view of an open file, with a few bytes replaced, that libsndfile reads through
/// its virtual I/O (internal).
///
/// Used to open a cut CAF file: libsndfile 1.2 takes 8 bytes fewer than the file holds once its
/// data chunk declares more than is there (its check subtracts a header's size twice), so a cut
/// CAF would lose up to two frames more than a WAV, AIFF, W64 or RF64 cut at the same place.
/// Shown a data chunk size that matches the bytes present, it keeps them all.
///
/// The view owns a descriptor of its own (closed when the view goes) and must outlive the
/// libsndfile handle opened on it.
final class PatchedFileView {
    private let descriptor: Int32
    private let size: Int64
    private let patchOffset: Int64
    private let patch: [UInt8]
    private var position: Int64 = 0

    /// A view of the file open on `descriptor` (duplicated), `size` bytes long, in which the
    /// bytes from `patchOffset` read as `patch`; nil when the descriptor cannot be duplicated.
    init?(descriptor: Int32, size: Int64, patchOffset: Int64, patch: [UInt8]) {
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { return nil }
        self.descriptor = duplicate
        self.size = size
        self.patchOffset = patchOffset
        self.patch = patch
    }

    deinit { FileSystem.closeDescriptor(descriptor) }

    /// Opens the view with libsndfile for reading; nil (with `sf_error(NULL)` set) on failure.
    func open(_ info: inout SF_INFO) -> OpaquePointer? {
        var io = SF_VIRTUAL_IO(
            get_filelen: { user in PatchedFileView.from(user).size },
            seek: { offset, whence, user in PatchedFileView.from(user).seek(offset, whence) },
            read: { pointer, count, user in PatchedFileView.from(user).read(into: pointer, count) },
            write: { _, _, _ in 0 },
            tell: { user in PatchedFileView.from(user).position })
        return sf_open_virtual(&io, Int32(SFM_READ), &info, Unmanaged.passUnretained(self).toOpaque())
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> PatchedFileView {
        Unmanaged<PatchedFileView>.fromOpaque(user!).takeUnretainedValue()
    }

    private func seek(_ offset: sf_count_t, _ whence: Int32) -> sf_count_t {
        guard let target = Sndfile.seekTarget(offset, whence: whence, position: position, end: size) else { return -1 }
        position = target
        return position
    }

    private func read(into pointer: UnsafeMutableRawPointer?, _ count: sf_count_t) -> sf_count_t {
        guard let pointer, count > 0, position < size else { return 0 }
        let wanted = Int(min(count, size - position))
        var done = 0
        while done < wanted {
            let got = pread(descriptor, pointer + done, wanted - done, off_t(position) + off_t(done))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            done += got
        }
        // Overlay the replaced bytes that fall inside what was read.
        let start = max(position, patchOffset)
        let end = min(position + Int64(done), patchOffset + Int64(patch.count))
        if start < end {
            for offset in start..<end {
                pointer.storeBytes(of: patch[Int(offset - patchOffset)], toByteOffset: Int(offset - position), as: UInt8.self)
            }
        }
        position += Int64(done)
        return sf_count_t(done)
    }
}
