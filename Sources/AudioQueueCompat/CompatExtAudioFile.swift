import Foundation
import Lockstep
import LockstepFiles

/// The object behind an ``ExtAudioFileRef``: a ``CompatAudioFile`` (the file's data format) plus
/// a ``CompatAudioConverter`` between it and the client format — file → client when reading,
/// client → file when writing — and, once `ExtAudioFileWriteAsync` is used, an
/// ``ExtAudioFileAsyncWriter``.
///
/// Locking: `lock` serializes reading, writing, seeking, properties and disposal — the caller's
/// threads and the asynchronous writer's worker. `asyncLock` guards only which asynchronous
/// writer there is, so `ExtAudioFileWriteAsync` never waits for a write to the disk.
final class CompatExtAudioFile: @unchecked Sendable {
    enum Mode { case reading, writing }

    let file: CompatAudioFile
    let mode: Mode
    /// Whether disposing closes the file (not for ``ExtAudioFileWrapAudioFileID(_:_:_:)``).
    let ownsFile: Bool
    let fileFormat: PCMFormat

    private let lock = NSLock()
    private var clientFormat: PCMFormat
    private var converter: CompatAudioConverter
    private var fileLayout: [UInt8]
    private var clientLayout: [UInt8]?
    private var ioBufferBytes = 32768
    /// Reading: the next file frame the converter takes, and where the last seek went.
    private var readPosition: Int64 = 0
    private var seekBase: Int64 = 0
    /// Writing: client frames taken since the converter began.
    private var clientFramesWritten: Int64 = 0
    private var wroteAudio = false
    private var disposed = false

    private let asyncLock = NSLock()
    private var asyncWriter: ExtAudioFileAsyncWriter?

    var ref: ExtAudioFileRef { ExtAudioFileRegistry.handle(self) }

    init(file: CompatAudioFile, mode: Mode, ownsFile: Bool, layout: [UInt8]?) throws(AudioQueueError) {
        self.file = file
        self.mode = mode
        self.ownsFile = ownsFile
        fileFormat = PCMFormat(file.layout)
        clientFormat = fileFormat
        fileLayout = layout ?? ChannelLayoutBytes.standard(channels: fileFormat.channelCount)
        converter = try Self.makeConverter(mode, file: fileFormat, client: fileFormat)
        if mode == .reading { readPosition = 0 }
    }

    private static func makeConverter(_ mode: Mode, file: PCMFormat, client: PCMFormat) throws(AudioQueueError) -> CompatAudioConverter {
        let core = mode == .reading ? try PCMConverter(from: file, to: client) : try PCMConverter(from: client, to: file)
        let converter = CompatAudioConverter(core: core)
        converter.isOwnedByFile = true
        ConverterRegistry.shared.add(converter)
        return converter
    }

    private func locked<T>(_ body: () throws(AudioQueueError) -> T) throws(AudioQueueError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !disposed else { throw AudioQueueError(kAudio_ParamError, "the ExtAudioFile has been disposed of") }
        return try body()
    }

    private var chunkFrames: Int { max(1, ioBufferBytes / fileFormat.bytesPerFrame) }

    // MARK: Reading

    /// Reads up to `frames` client frames into `list`; returns the frames read (0 at the end).
    func read(frames requested: Int, into list: UnsafeMutableAudioBufferListPointer) throws(AudioQueueError) -> Int {
        try locked { () throws(AudioQueueError) -> Int in
            guard mode == .reading else {
                throw AudioQueueError(kExtAudioFileError_InvalidOperationOrder, "the file was created for writing; dispose of it and open it with ExtAudioFileOpenURL to read it")
            }
            let frames = min(requested, try BufferListAccess.capacity(list, format: clientFormat))
            return try converter.locked { () throws(AudioQueueError) -> Int in
                let core = converter.core
                let capacity = max(core.inputFrames(forOutput: frames), chunkFrames)
                var scratch: UnsafeMutableRawPointer?
                defer { scratch?.deallocate() }
                while core.available < frames && !core.ended {
                    let want = min(capacity, max(core.inputFrames(forOutput: frames - core.available), chunkFrames))
                    let buffer = scratch ?? UnsafeMutableRawPointer.allocate(byteCount: capacity * fileFormat.bytesPerFrame, alignment: 16)
                    scratch = buffer
                    let got = try file.readFrames(into: buffer, from: readPosition, frames: want)
                    if got == 0 {
                        core.end()
                    } else {
                        core.push([UnsafeRawPointer(buffer)], frames: got)
                        readPosition += Int64(got)
                    }
                }
                let produced = core.pull(into: BufferListAccess.pointers(list), frames: frames)
                BufferListAccess.setByteSizes(list, format: clientFormat, frames: produced)
                return produced
            }
        }
    }

    /// Moves the read position to file frame `frame`.
    func seek(_ frame: Int64) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            if mode == .writing {
                guard frame == tellLocked() else {
                    throw AudioQueueError(kExtAudioFileError_InvalidSeek, "a file being written is written in order; it is at frame \(tellLocked()), not \(frame)")
                }
                return
            }
            let length = file.frameCount
            guard frame >= 0, frame <= length else {
                throw AudioQueueError(kExtAudioFileError_InvalidSeek, "frame \(frame) is outside the file's 0…\(length) frames")
            }
            converter.locked { converter.core.reset() }
            readPosition = frame
            seekBase = frame
        }
    }

    /// The position in file frames.
    func tell() throws(AudioQueueError) -> Int64 {
        try locked { () throws(AudioQueueError) -> Int64 in tellLocked() }
    }

    private func tellLocked() -> Int64 {
        let core = converter.core
        switch mode {
        case .reading:
            let delivered = Double(core.deliveredFrames) * fileFormat.sampleRate / clientFormat.sampleRate
            return min(file.frameCount, seekBase + Int64(delivered.rounded()))
        case .writing:
            return Int64((Double(clientFramesWritten) * fileFormat.sampleRate / clientFormat.sampleRate).rounded())
        }
    }

    // MARK: Writing

    /// Converts and writes `frames` client frames from `list`.
    func write(frames: Int, from list: UnsafeMutableAudioBufferListPointer) throws(AudioQueueError) {
        try requireWriting("ExtAudioFileWrite")
        try locked { () throws(AudioQueueError) in
            try drainAsync()
            guard frames > 0 else { return }
            let inputs = try BufferListAccess.inputs(list, format: clientFormat, frames: frames, code: kAudio_ParamError)
            try converter.locked { () throws(AudioQueueError) in
                converter.core.push(inputs, frames: frames)
                clientFramesWritten += Int64(frames)
                try writeConverted()
            }
        }
    }

    private func requireWriting(_ function: String) throws(AudioQueueError) {
        guard mode == .writing else {
            throw AudioQueueError(kExtAudioFileError_InvalidOperationOrder, "\(function) needs a file created with ExtAudioFileCreateWithURL; this one is open for reading")
        }
    }

    /// Writes what the converter has ready to the file. Called with both locks held.
    private func writeConverted() throws(AudioQueueError) {
        let core = converter.core
        guard core.available > 0 else { return }
        let chunk = min(core.available, max(chunkFrames, 4096))
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: chunk * fileFormat.bytesPerFrame, alignment: 16)
        defer { scratch.deallocate() }
        while core.available > 0 {
            let n = core.pull(into: [scratch], frames: chunk)
            try file.writeFrames(from: scratch, frames: n)
            wroteAudio = true
        }
    }

    /// Converts and writes what the current asynchronous writer holds. Called with `lock` held.
    private func drainAsync() throws(AudioQueueError) {
        guard let writer = asyncLock.withLock({ asyncWriter }) else { return }
        try drain(writer)
    }

    /// Converts and writes what `writer` holds. Called with `lock` held.
    private func drain(_ writer: ExtAudioFileAsyncWriter) throws(AudioQueueError) {
        if let error = writer.error { throw error }
        try converter.locked { () throws(AudioQueueError) in
            try writer.consume { (samples, frames) throws(AudioQueueError) in
                converter.core.pushDecoded(samples, frames: frames)
                clientFramesWritten += Int64(frames)
                try writeConverted()
            }
        }
    }

    /// Queues `frames` client frames for the worker (starting it first if needed); with no list,
    /// only starts it (Apple's priming call).
    func writeAsync(frames: Int, from list: UnsafeMutableAudioBufferListPointer?) throws(AudioQueueError) {
        try requireWriting("ExtAudioFileWriteAsync")
        // Never wait for `lock` while holding `asyncLock`: the worker takes them the other way round.
        var writer = asyncLock.withLock { asyncWriter }
        if writer == nil {
            let format = try locked { () throws(AudioQueueError) -> PCMFormat in clientFormat }
            writer = asyncLock.withLock { () -> ExtAudioFileAsyncWriter in
                if let writer = asyncWriter { return writer }
                let writer = ExtAudioFileAsyncWriter(format: format) { [unowned self] writer in
                    lock.lock()
                    defer { lock.unlock() }
                    do throws(AudioQueueError) { try drain(writer) } catch { writer.record(error) }
                }
                asyncWriter = writer
                return writer
            }
        }
        guard frames > 0, let list, let writer else { return }
        _ = try BufferListAccess.inputsChecked(list, format: writer.format, frames: frames)
        try writer.enqueue(list, frames: frames)
    }

    /// Stops the asynchronous writer after it has written everything queued. Call without `lock`.
    private func stopAsync() -> AudioQueueError? {
        guard let writer = asyncLock.withLock({ () -> ExtAudioFileAsyncWriter? in
            defer { asyncWriter = nil }
            return asyncWriter
        }) else { return nil }
        writer.stop()
        return writer.error
    }

    // MARK: Disposal

    /// Finishes the file — the asynchronous writer's frames, the converter's tail, the header —
    /// and closes it; a file created here appears at its path now. After a write error the file
    /// is abandoned (nothing is left at the path) and the error returned.
    func dispose() throws(AudioQueueError) {
        let asyncError = stopAsync()
        try locked { () throws(AudioQueueError) in
            disposed = true
            defer { ConverterRegistry.shared.remove(converter) }
            var failure = asyncError
            if mode == .writing && failure == nil {
                do throws(AudioQueueError) {
                    try converter.locked { () throws(AudioQueueError) in
                        converter.core.end()
                        try writeConverted()
                    }
                } catch {
                    failure = error
                }
            }
            guard ownsFile else {
                if let failure { throw failure }
                return
            }
            FileRegistry.shared.remove(file)
            if let failure {
                file.abort()
                throw failure
            }
            try file.close()
        }
    }

    // MARK: Properties

    /// The size of property `id` and whether it can be set now.
    func propertyInfo(_ id: ExtAudioFilePropertyID) throws(AudioQueueError) -> (Int, Bool) {
        try locked { () throws(AudioQueueError) -> (Int, Bool) in try propertyInfoLocked(id) }
    }

    private func propertyInfoLocked(_ id: ExtAudioFilePropertyID) throws(AudioQueueError) -> (Int, Bool) {
        let asbd = MemoryLayout<AudioStreamBasicDescription>.size
        switch id {
        case kExtAudioFileProperty_FileDataFormat: return (asbd, false)
        case kExtAudioFileProperty_ClientDataFormat: return (asbd, true)
        case kExtAudioFileProperty_FileChannelLayout: return (fileLayout.count, mode == .writing && !wroteAudio)
        case kExtAudioFileProperty_ClientChannelLayout:
            return ((clientLayout ?? ChannelLayoutBytes.standard(channels: clientFormat.channelCount)).count, true)
        case kExtAudioFileProperty_AudioConverter, kExtAudioFileProperty_AudioFile:
            return (MemoryLayout<OpaquePointer>.size, false)
        case kExtAudioFileProperty_ConverterConfig: return (MemoryLayout<UnsafeRawPointer?>.size, true)
        case kExtAudioFileProperty_FileMaxPacketSize, kExtAudioFileProperty_ClientMaxPacketSize: return (4, false)
        case kExtAudioFileProperty_IOBufferSizeBytes: return (4, true)
        case kExtAudioFileProperty_FileLengthFrames: return (8, false)
        case kExtAudioFileProperty_CodecManufacturer, kExtAudioFileProperty_IOBuffer, kExtAudioFileProperty_PacketTable:
            throw AudioQueueError(kExtAudioFileError_InvalidProperty, "'\(fourCharCodeString(id))' concerns codecs and compressed files, which Lockstep's ExtAudioFile does not provide (linear PCM only)")
        default:
            throw AudioQueueError(kExtAudioFileError_InvalidProperty, "'\(fourCharCodeString(id))' is not an ExtAudioFile property")
        }
    }

    func property(_ id: ExtAudioFilePropertyID, _ data: UnsafeMutableRawPointer, _ size: inout UInt32) throws(AudioQueueError) {
        try locked { () throws(AudioQueueError) in
            let (needed, _) = try propertyInfoLocked(id)
            guard Int(size) >= needed else {
                throw AudioQueueError(kExtAudioFileError_InvalidPropertySize, "property '\(fourCharCodeString(id))' needs \(needed) bytes, not \(size)")
            }
            func put<T>(_ value: T) { data.storeBytes(of: value, as: T.self) }
            func putBytes(_ bytes: [UInt8]) { bytes.withUnsafeBytes { data.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) } }
            switch id {
            case kExtAudioFileProperty_FileDataFormat: put(file.dataFormat)
            case kExtAudioFileProperty_ClientDataFormat: put(clientFormat.streamDescription)
            case kExtAudioFileProperty_FileChannelLayout: putBytes(fileLayout)
            case kExtAudioFileProperty_ClientChannelLayout:
                putBytes(clientLayout ?? ChannelLayoutBytes.standard(channels: clientFormat.channelCount))
            case kExtAudioFileProperty_AudioConverter: put(converter.ref)
            case kExtAudioFileProperty_AudioFile:
                FileRegistry.shared.add(file)
                put(file.ref)
            case kExtAudioFileProperty_ConverterConfig: put(UnsafeRawPointer?.none)
            case kExtAudioFileProperty_FileMaxPacketSize:
                let bytes = (try? file.property(kAudioFilePropertyMaximumPacketSize)) ?? []
                put(bytes.count == 4 ? bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } : UInt32(fileFormat.bytesPerFrame))
            case kExtAudioFileProperty_ClientMaxPacketSize: put(UInt32(clientFormat.bytesPerFrame))
            case kExtAudioFileProperty_IOBufferSizeBytes: put(UInt32(ioBufferBytes))
            case kExtAudioFileProperty_FileLengthFrames: put(Int64(file.frameCount))
            default: break
            }
            size = UInt32(needed)
        }
    }

    func setProperty(_ id: ExtAudioFilePropertyID, _ data: UnsafeRawPointer, _ size: Int) throws(AudioQueueError) {
        // A new client format changes what the asynchronous writer decodes: finish it first.
        if id == kExtAudioFileProperty_ClientDataFormat, let error = stopAsync() { throw error }
        try locked { () throws(AudioQueueError) in
            let (needed, writable) = try propertyInfoLocked(id)
            guard writable else {
                throw AudioQueueError(id == kExtAudioFileProperty_FileChannelLayout ? kExtAudioFileError_InvalidOperationOrder : kExtAudioFileError_InvalidProperty,
                    id == kExtAudioFileProperty_FileChannelLayout ? "the file's channel layout can be set only on a new file, before any audio is written" : "ExtAudioFile property '\(fourCharCodeString(id))' is read-only")
            }
            let fixedSize = id != kExtAudioFileProperty_FileChannelLayout && id != kExtAudioFileProperty_ClientChannelLayout
            guard !fixedSize || size == needed else {
                throw AudioQueueError(kExtAudioFileError_InvalidPropertySize, "property '\(fourCharCodeString(id))' takes \(needed) bytes, not \(size)")
            }
            switch id {
            case kExtAudioFileProperty_ClientDataFormat:
                try setClientFormat(data.loadUnaligned(as: AudioStreamBasicDescription.self))
            case kExtAudioFileProperty_FileChannelLayout:
                fileLayout = try checkedLayout(data, size, channels: fileFormat.channelCount)
            case kExtAudioFileProperty_ClientChannelLayout:
                clientLayout = try checkedLayout(data, size, channels: clientFormat.channelCount)
            case kExtAudioFileProperty_IOBufferSizeBytes:
                let bytes = Int(data.loadUnaligned(as: UInt32.self))
                guard bytes >= fileFormat.bytesPerFrame else {
                    throw AudioQueueError(kAudio_ParamError, "an I/O buffer of \(bytes) bytes holds no \(fileFormat.bytesPerFrame)-byte frame")
                }
                ioBufferBytes = bytes
            case kExtAudioFileProperty_ConverterConfig:
                // Converter properties set through kExtAudioFileProperty_AudioConverter apply at
                // once; setting the configuration (usually NULL) is how Apple's code says so.
                break
            default:
                break
            }
        }
    }

    private func checkedLayout(_ data: UnsafeRawPointer, _ size: Int, channels: Int) throws(AudioQueueError) -> [UInt8] {
        let count = try ChannelLayoutBytes.channelCount(data, size: size, sizeError: kExtAudioFileError_InvalidPropertySize)
        guard count == channels else {
            throw AudioQueueError(kExtAudioFileError_InvalidChannelMap, "the layout describes \(count) channels but the format has \(channels)")
        }
        return Array(UnsafeRawBufferPointer(start: data, count: size))
    }

    /// Installs a new client format: a new converter, starting where the old one left off.
    /// Called with `lock` held (and the asynchronous writer stopped).
    private func setClientFormat(_ asbd: AudioStreamBasicDescription) throws(AudioQueueError) {
        guard asbd.mFormatID == kAudioFormatLinearPCM else {
            throw AudioQueueError(kExtAudioFileError_NonPCMClientFormat, "the client format '\(fourCharCodeString(asbd.mFormatID))' is not linear PCM; the client side of an ExtAudioFile is always linear PCM")
        }
        let format = try PCMFormat.make(asbd).get()
        let next = try Self.makeConverter(mode, file: fileFormat, client: format)
        switch mode {
        case .reading:
            // Go on from the frame the client has reached.
            let position = tellLocked()
            readPosition = position
            seekBase = position
        case .writing:
            do throws(AudioQueueError) {
                try converter.locked { () throws(AudioQueueError) in
                    converter.core.end()
                    try writeConverted()
                }
            } catch {
                ConverterRegistry.shared.remove(next)
                throw error
            }
            clientFramesWritten = Int64((Double(clientFramesWritten) * format.sampleRate / clientFormat.sampleRate).rounded())
        }
        ConverterRegistry.shared.remove(converter)
        converter = next
        clientFormat = format
        if let layout = clientLayout,
           (try? layout.withUnsafeBytes { (raw) throws(AudioQueueError) -> Int in
               try ChannelLayoutBytes.channelCount(raw.baseAddress!, size: raw.count, sizeError: kExtAudioFileError_InvalidPropertySize)
           }) != format.channelCount {
            clientLayout = nil
        }
    }
}

extension BufferListAccess {
    /// Checks an input list without building anything (for the asynchronous path): buffer count,
    /// data and size. Returns the frames.
    static func inputsChecked(_ list: UnsafeMutableAudioBufferListPointer, format: PCMFormat, frames: Int) throws(AudioQueueError) -> Int {
        guard list.count == format.bufferCount else {
            throw AudioQueueError(kAudio_ParamError, "the buffer list has \(list.count) buffers but \(format) takes \(format.bufferCount)")
        }
        for index in 0..<list.count {
            let buffer = list[index]
            guard buffer.mData != nil, Int(buffer.mDataByteSize) >= frames * format.bytesPerFrame else {
                throw AudioQueueError(kAudio_ParamError, "buffer \(index) holds \(buffer.mDataByteSize) bytes (or no data), fewer than \(frames) frames of \(format.bytesPerFrame) bytes")
            }
        }
        return frames
    }
}

/// Every live ``CompatExtAudioFile`` by its reference.
typealias ExtAudioFileRegistry = HandleRegistry<CompatExtAudioFile>

extension HandleRegistry where Object == CompatExtAudioFile {
    static let shared = HandleRegistry(unknown: AudioQueueError(kAudio_ParamError, "not an ExtAudioFile (never opened, or disposed of)"))
}
