#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Core Audio's buffer lists (CoreAudioBaseTypes.h) and the helpers Apple's Swift overlay adds to
// them. `AudioBuffer` and `AudioBufferList` are the C structures of `CAudioQueueTypes`, with
// Apple's fields and layout: an `AudioBufferList` holds `mNumberBuffers` buffers, the first in
// the structure and the others after it in memory (C's variable-length `mBuffers[1]`).

extension AudioBuffer: @unchecked @retroactive Sendable {}
extension AudioBufferList: @unchecked @retroactive Sendable {}

extension AudioBuffer {
    /// Describes the memory of `typedBuffer` holding `numberOfChannels` interleaved channels:
    /// `mData` is its base address and `mDataByteSize` its size in bytes. The corresponding
    /// Apple initializer is `AudioBuffer.init(_:numberOfChannels:)` of Apple's Swift overlay.
    public init<Element>(_ typedBuffer: UnsafeMutableBufferPointer<Element>, numberOfChannels: Int) {
        self.init()
        mNumberChannels = UInt32(numberOfChannels)
        mData = UnsafeMutableRawPointer(typedBuffer.baseAddress)
        mDataByteSize = UInt32(typedBuffer.count * MemoryLayout<Element>.stride)
    }
}

extension AudioBufferList {
    /// The bytes an `AudioBufferList` of `maximumBuffers` buffers needs (24 for one, 16 more for
    /// each further buffer). The corresponding Apple function is
    /// `AudioBufferList.sizeInBytes(maximumBuffers:)`.
    ///
    /// - Precondition: `maximumBuffers` ≥ 1.
    public static func sizeInBytes(maximumBuffers: Int) -> Int {
        precondition(maximumBuffers >= 1, "an AudioBufferList holds at least one AudioBuffer")
        return MemoryLayout<AudioBufferList>.size + (maximumBuffers - 1) * MemoryLayout<AudioBuffer>.stride
    }

    /// Allocates a zeroed `AudioBufferList` with room for `maximumBuffers` buffers and
    /// `mNumberBuffers` set to `maximumBuffers`. Release it with `free(list.unsafeMutablePointer)`,
    /// as on Apple. The corresponding Apple function is `AudioBufferList.allocate(maximumBuffers:)`.
    ///
    /// - Precondition: `maximumBuffers` ≥ 1.
    public static func allocate(maximumBuffers: Int) -> UnsafeMutableAudioBufferListPointer {
        let bytes = sizeInBytes(maximumBuffers: maximumBuffers)
        guard let memory = calloc(bytes, 1) else { fatalError("cannot allocate an AudioBufferList of \(bytes) bytes") }
        let list = UnsafeMutableAudioBufferListPointer(memory.bindMemory(to: AudioBufferList.self, capacity: 1))
        list.count = maximumBuffers
        return list
    }
}

/// A collection view of the buffers of an `AudioBufferList` in memory: `list[1].mData`, `for
/// buffer in list`, `list.count`. The corresponding Apple type is
/// `UnsafeMutableAudioBufferListPointer` (Apple's Swift overlay).
///
/// Like the pointer it wraps, it does not own the memory: the list must have room for
/// ``count`` buffers.
public struct UnsafeMutableAudioBufferListPointer: @unchecked Sendable {
    /// The list this view reads and writes.
    public var unsafeMutablePointer: UnsafeMutablePointer<AudioBufferList>

    /// Views the list at `pointer`.
    public init(_ pointer: UnsafeMutablePointer<AudioBufferList>) {
        unsafeMutablePointer = pointer
    }

    /// Views the list at `pointer`, or returns nil for a nil pointer.
    public init?(_ pointer: UnsafeMutablePointer<AudioBufferList>?) {
        guard let pointer else { return nil }
        self.init(pointer)
    }

    /// The list as a read-only pointer.
    public var unsafePointer: UnsafePointer<AudioBufferList> { UnsafePointer(unsafeMutablePointer) }

    /// The number of buffers (`mNumberBuffers`); setting it changes `mNumberBuffers` only.
    public var count: Int {
        get { Int(unsafeMutablePointer.pointee.mNumberBuffers) }
        nonmutating set { unsafeMutablePointer.pointee.mNumberBuffers = UInt32(newValue) }
    }

    /// The first buffer, where `mBuffers` begins.
    var buffers: UnsafeMutablePointer<AudioBuffer> {
        let offset = MemoryLayout<AudioBufferList>.offset(of: \AudioBufferList.mBuffers) ?? 8
        return (UnsafeMutableRawPointer(unsafeMutablePointer) + offset).assumingMemoryBound(to: AudioBuffer.self)
    }
}

extension UnsafeMutableAudioBufferListPointer: MutableCollection, RandomAccessCollection {
    /// 0.
    public var startIndex: Int { 0 }
    /// ``count``.
    public var endIndex: Int { count }

    /// The buffer at `index` (0 ..< ``count``).
    public subscript(index: Int) -> AudioBuffer {
        get {
            precondition(index >= 0 && index < count, "buffer index \(index) is outside 0..<\(count)")
            return buffers[index]
        }
        nonmutating set {
            precondition(index >= 0 && index < count, "buffer index \(index) is outside 0..<\(count)")
            buffers[index] = newValue
        }
    }
}
