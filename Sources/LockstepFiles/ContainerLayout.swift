/// Where the audio data of an uncompressed WAV, RF64, W64, AIFF or CAF file starts and how many
/// bytes of it the header declares, read from the header with bounded reads (internal).
///
/// libsndfile trims a truncated file's frame count to the whole frames present, but it does so
/// differently per container (CAF and W64 say nothing; WAV, AIFF and RF64 only note it in their
/// parse logs) and never reports a partial frame at the end. The layout lets the reader judge
/// every container the same way: see ``DataExtent``.
struct ContainerLayout: Equatable {
    /// The byte offset of the first audio byte.
    var dataOffset: Int64
    /// The audio bytes the header declares, or nil when it leaves the length open (a streaming
    /// placeholder: a WAV data size of 0, 0xFFFFFFFF or sox's 0x7FFFF000, a CAF data size of −1).
    var declaredBytes: Int64?
    /// For W64: the size of the whole file the header declares. libsndfile's W64 writer counts the
    /// padding to 8 bytes in the data chunk's size without writing it (nor counting it in the file
    /// size), so when the declared file size ends the data up to 7 bytes before the data chunk's
    /// declared end, the audio ends there.
    var declaredFileSize: Int64?
    /// For AIFF: the frame count of the `COMM` chunk. libsndfile's AIFF writer counts the pad
    /// byte after an odd-sized `SSND` chunk in its size, so the frame count decides whether that
    /// last byte is audio.
    var declaredFrames: Int64?

    /// The audio bytes declared, padding counted in a chunk size left out (see
    /// ``declaredFileSize`` and ``declaredFrames``).
    func declaredAudioBytes(bytesPerFrame: Int64) -> Int64? {
        guard let declaredBytes else { return nil }
        if let declaredFileSize, declaredFileSize > dataOffset {
            let toEnd = declaredFileSize - dataOffset
            if toEnd < declaredBytes && declaredBytes - toEnd < 8 { return toEnd }
        }
        if let declaredFrames, declaredFrames <= declaredBytes / bytesPerFrame {
            let framed = declaredFrames * bytesPerFrame
            if framed < declaredBytes && declaredBytes - framed < bytesPerFrame { return framed }
        }
        return declaredBytes
    }

    /// The WAV data size sox writes when it cannot seek back to fix it (its `MS_UNSPEC`,
    /// 0x7FFFF000), which Lockstep writes too for WAV on a pipe (see ``PipeSink``): a length left
    /// open, like 0 and 0xFFFFFFFF.
    static let soxUnspecifiedLength: Int64 = 0x7FFF_F000

    /// The most chunks looked at before giving up (a hostile file cannot make the walk long).
    static let maximumChunks = 4096

    /// What walking a header found.
    enum Walk: Equatable {
        /// The audio data's place and declared length.
        case found(ContainerLayout)
        /// The file ends before the audio data's first byte (inside a chunk header or between
        /// chunks), with no audio data chunk complete.
        case endsInHeader
        /// Not one of the five containers, or a header the walk cannot follow (a chunk size
        /// beyond the file, more than ``maximumChunks`` chunks, a read error).
        case unknown
    }

    /// Walks the header of the file open on `descriptor` (of `fileSize` bytes) to its audio data.
    static func read(descriptor: Int32, fileSize: Int64) -> Walk {
        guard let magic = FileSystem.read(descriptor, at: 0, count: 12) else { return .unknown }
        let id = String(decoding: magic[0..<4], as: UTF8.self)
        switch id {
        case "RIFF", "RIFX", "RF64", "BW64":
            guard String(decoding: magic[8..<12], as: UTF8.self) == "WAVE" else { return .unknown }
            return riff(descriptor, fileSize: fileSize, bigEndian: id == "RIFX", sixtyFour: id == "RF64" || id == "BW64")
        case "FORM":
            let form = String(decoding: magic[8..<12], as: UTF8.self)
            guard form == "AIFF" || form == "AIFC" else { return .unknown }
            return aiff(descriptor, fileSize: fileSize)
        case "caff":
            return caf(descriptor, fileSize: fileSize)
        case "riff":
            return w64(descriptor, fileSize: fileSize)
        default:
            return .unknown
        }
    }

    /// WAV (RIFF little-endian, RIFX big-endian) and RF64/BW64 (sizes in the `ds64` chunk).
    private static func riff(_ descriptor: Int32, fileSize: Int64, bigEndian: Bool, sixtyFour: Bool) -> Walk {
        var offset: Int64 = 12
        var ds64DataSize: Int64?
        for _ in 0..<maximumChunks {
            guard offset + 8 <= fileSize else { return .endsInHeader }
            guard let header = FileSystem.read(descriptor, at: offset, count: 8) else { return .unknown }
            let id = String(decoding: header[0..<4], as: UTF8.self)
            let size = Int64(bigEndian ? uint32BE(header, 4) : uint32LE(header, 4))
            if id == "ds64", sixtyFour, let body = FileSystem.read(descriptor, at: offset + 8, count: 16) {
                ds64DataSize = Int64(bitPattern: uint64LE(body, 8))
            }
            if id == "data" {
                var declared: Int64? = size
                if sixtyFour && size == 0xFFFF_FFFF {
                    declared = ds64DataSize.flatMap { $0 > 0 ? $0 : nil }
                } else if size == 0 || size == 0xFFFF_FFFF || size == Self.soxUnspecifiedLength {
                    declared = nil
                }
                return .found(ContainerLayout(dataOffset: offset + 8, declaredBytes: declared))
            }
            offset += 8 + size + (size & 1)
        }
        return .unknown
    }

    /// AIFF and AIFF-C: the `SSND` chunk, whose size counts its 8-byte offset/block-size fields.
    private static func aiff(_ descriptor: Int32, fileSize: Int64) -> Walk {
        var offset: Int64 = 12
        var frames: Int64?
        for _ in 0..<maximumChunks {
            guard offset + 8 <= fileSize else { return .endsInHeader }
            guard let header = FileSystem.read(descriptor, at: offset, count: 8) else { return .unknown }
            let id = String(decoding: header[0..<4], as: UTF8.self)
            let size = Int64(uint32BE(header, 4))
            if id == "COMM", size >= 6, let fields = FileSystem.read(descriptor, at: offset + 8, count: 6) {
                frames = Int64(uint32BE(fields, 2))
            }
            if id == "SSND" {
                guard offset + 16 <= fileSize else { return .endsInHeader }
                guard let fields = FileSystem.read(descriptor, at: offset + 8, count: 8) else { return .unknown }
                let skip = Int64(uint32BE(fields, 0))
                guard size >= 8 + skip else { return .unknown }
                return .found(ContainerLayout(dataOffset: offset + 16 + skip, declaredBytes: size - 8 - skip, declaredFrames: frames))
            }
            offset += 8 + size + (size & 1)
        }
        return .unknown
    }

    /// CAF: 64-bit big-endian chunk sizes; the `data` chunk starts with a 4-byte edit count and a
    /// size of −1 means "to the end of the file".
    private static func caf(_ descriptor: Int32, fileSize: Int64) -> Walk {
        var offset: Int64 = 8
        for _ in 0..<maximumChunks {
            guard offset + 12 <= fileSize else { return .endsInHeader }
            guard let header = FileSystem.read(descriptor, at: offset, count: 12) else { return .unknown }
            let id = String(decoding: header[0..<4], as: UTF8.self)
            let size = Int64(bitPattern: uint64BE(header, 4))
            if id == "data" {
                guard offset + 16 <= fileSize else { return .endsInHeader }
                if size == -1 { return .found(ContainerLayout(dataOffset: offset + 16, declaredBytes: nil)) }
                guard size >= 4 else { return .unknown }
                return .found(ContainerLayout(dataOffset: offset + 16, declaredBytes: size - 4))
            }
            guard size >= 0, size <= fileSize else { return .unknown }
            offset += 12 + size
        }
        return .unknown
    }

    /// W64: 16-byte GUID chunk ids and 64-bit little-endian sizes that include the 24-byte chunk
    /// header; chunks are aligned to 8 bytes.
    private static func w64(_ descriptor: Int32, fileSize: Int64) -> Walk {
        guard fileSize >= 40 else { return .endsInHeader }
        guard let header = FileSystem.read(descriptor, at: 0, count: 40),
              header[0..<16].elementsEqual(riffGUID), header[24..<40].elementsEqual(waveGUID) else { return .unknown }
        let declaredFileSize = Int64(bitPattern: uint64LE(header, 16))
        var offset: Int64 = 40
        for _ in 0..<maximumChunks {
            guard offset + 24 <= fileSize else { return .endsInHeader }
            guard let chunk = FileSystem.read(descriptor, at: offset, count: 24) else { return .unknown }
            let size = Int64(bitPattern: uint64LE(chunk, 16))
            guard size >= 24 else { return .unknown }
            if chunk[0..<16].elementsEqual(dataGUID) {
                return .found(ContainerLayout(dataOffset: offset + 24, declaredBytes: size - 24, declaredFileSize: declaredFileSize))
            }
            guard size <= fileSize else { return .unknown }
            offset += (size + 7) / 8 * 8
        }
        return .unknown
    }

    private static let riffGUID: [UInt8] = [0x72, 0x69, 0x66, 0x66, 0x2E, 0x91, 0xCF, 0x11,
                                            0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]
    private static let waveGUID: [UInt8] = [0x77, 0x61, 0x76, 0x65, 0xF3, 0xAC, 0xD3, 0x11,
                                            0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A]
    private static let dataGUID: [UInt8] = [0x64, 0x61, 0x74, 0x61, 0xF3, 0xAC, 0xD3, 0x11,
                                            0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A]

    private static func uint32LE(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }
    private static func uint32BE(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[at + $1]) }
    }
    private static func uint64LE(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }
    private static func uint64BE(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + $1]) }
    }

    /// How the audio data present compares with what the header declares.
    enum DataExtent: Equatable {
        /// Every declared frame is there, and nothing else.
        case complete
        /// The whole frames are there, followed by `bytes` (1 … bytes per frame − 1) of a partial
        /// frame: the file was cut inside its last frame, or its header declares a partial frame.
        case partialFrame(bytes: Int)
        /// At least one whole declared frame is missing: the header declares `declaredFrames`.
        case truncated(declaredFrames: Int64)
    }

    /// Judges the data: `fileSize` bytes on disk, `bytesPerFrame` per frame, and libsndfile's
    /// frame count `frames` (which must not exceed the whole frames present, or nil is returned:
    /// the layout and libsndfile disagree, so the layout is not trusted).
    func extent(fileSize: Int64, bytesPerFrame: Int64, frames: Int64) -> DataExtent? {
        guard bytesPerFrame > 0, dataOffset >= 0 else { return nil }
        let available = max(0, fileSize - dataOffset)
        let declaredAudio = declaredAudioBytes(bytesPerFrame: bytesPerFrame)
        let present = min(declaredAudio ?? available, available)
        let whole = present / bytesPerFrame
        let partial = Int(present - whole * bytesPerFrame)
        guard frames <= whole else { return nil }
        // A partial frame is only reported when libsndfile plays every whole frame before it.
        let ignored: DataExtent = partial > 0 && frames == whole ? .partialFrame(bytes: partial) : .complete
        guard let declared = declaredAudio else { return ignored }
        let declaredWhole = declared / bytesPerFrame
        if whole >= declaredWhole { return ignored }
        if declaredWhole - whole == 1 && partial > 0 && frames == whole { return .partialFrame(bytes: partial) }
        return .truncated(declaredFrames: declaredWhole)
    }
}
