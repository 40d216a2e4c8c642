import CSndfile
import Lockstep

/// Internal helpers around the libsndfile C API.
enum Sndfile {
    /// libsndfile's name for a major format or a subtype, from `SFC_GET_FORMAT_INFO`
    /// (such as `WAV (Microsoft)` or `Signed 16 bit PCM`); a hexadecimal code if it has none.
    static func formatName(_ format: Int32) -> String {
        var info = SF_FORMAT_INFO()
        info.format = format
        let status = sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info,
                                Int32(MemoryLayout<SF_FORMAT_INFO>.size))
        if status == 0, let name = info.name {
            return String(cString: name)
        }
        return "format 0x" + String(format, radix: 16)
    }

    /// The text of libsndfile's current error for `handle`, or for the last failed open when `nil`.
    static func errorText(_ handle: OpaquePointer?) -> String {
        guard let text = sf_strerror(handle) else { return "unknown libsndfile error" }
        return String(cString: text)
    }

    /// The diagnostic log libsndfile wrote while parsing the file's header.
    static func log(_ handle: OpaquePointer) -> String {
        let capacity = 16 * 1024
        var buffer = [CChar](repeating: 0, count: capacity)
        _ = buffer.withUnsafeMutableBytes { raw in
            sf_command(handle, Int32(SFC_GET_LOG_INFO), raw.baseAddress, Int32(capacity - 1))
        }
        buffer[capacity - 1] = 0
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The subtype part of a libsndfile format word.
    static func subtype(_ format: Int32) -> Int32 { format & Int32(SF_FORMAT_SUBMASK) }

    /// The major-type part of a libsndfile format word.
    static func major(_ format: Int32) -> Int32 { format & Int32(SF_FORMAT_TYPEMASK) }

    /// The Lockstep sample format nearest to a subtype's native encoding: integer PCM and lossless
    /// codecs keep their bit depth (8-bit and companded encodings become 16-bit), floats keep
    /// their width, lossy codecs become 32-bit float.
    static func nearestSampleFormat(subtype: Int32) -> SampleFormat {
        switch subtype {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_PCM_16),
             Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW), Int32(SF_FORMAT_DPCM_8),
             Int32(SF_FORMAT_DPCM_16), Int32(SF_FORMAT_DWVW_12), Int32(SF_FORMAT_DWVW_16),
             Int32(SF_FORMAT_ALAC_16):
            return .int16
        case Int32(SF_FORMAT_PCM_24), Int32(SF_FORMAT_DWVW_24), Int32(SF_FORMAT_ALAC_20),
             Int32(SF_FORMAT_ALAC_24):
            return .int24
        case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_ALAC_32):
            return .int32
        case Int32(SF_FORMAT_DOUBLE):
            return .float64
        default:
            return .float32
        }
    }

    /// Bytes per sample of an uncompressed subtype, `nil` for compressed encodings.
    static func uncompressedBytesPerSample(subtype: Int32) -> Int? {
        switch subtype {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_ULAW),
             Int32(SF_FORMAT_ALAW):
            return 1
        case Int32(SF_FORMAT_PCM_16): return 2
        case Int32(SF_FORMAT_PCM_24): return 3
        case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_FLOAT): return 4
        case Int32(SF_FORMAT_DOUBLE): return 8
        default: return nil
        }
    }

    /// Whether a subtype is a lossy codec whose frame count libsndfile may only estimate.
    static func hasEstimatedLength(format: Int32) -> Bool {
        major(format) == Int32(SF_FORMAT_MPEG)
    }

    /// The error for a failed `sf_open`, classified by `sf_error(NULL)`.
    static func openError(path: String, forWriting: Bool) -> FileError {
        let code = sf_error(nil)
        let text = errorText(nil)
        if forWriting {
            return FileError(.ioError, path: path,
                problem: "cannot create the audio file (\(text)); check the folder's free space and permissions", libsndfileCode: code)
        }
        switch code {
        case Int32(SF_ERR_UNRECOGNISED_FORMAT):
            return FileError(.unsupportedFormat, path: path,
                problem: "not an audio file libsndfile can read (\(text)); convert it to WAV or FLAC", libsndfileCode: code)
        case Int32(SF_ERR_UNSUPPORTED_ENCODING):
            return FileError(.unsupportedFormat, path: path,
                problem: "uses an audio encoding libsndfile cannot decode (\(text)); convert it to WAV or FLAC", libsndfileCode: code)
        case Int32(SF_ERR_SYSTEM):
            return FileError(.ioError, path: path,
                problem: "cannot read the file (\(text)); check that the disk is readable and the file is not locked", libsndfileCode: code)
        default:
            return FileError(.corrupt, path: path,
                problem: "damaged or incomplete audio file (\(text)); re-export or re-copy it from the original", libsndfileCode: code)
        }
    }
}
