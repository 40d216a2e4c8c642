import Lockstep

/// `AudioChannelLayout` values as bytes: the layout Lockstep gives N channels in order, and the
/// channel count a layout describes. Shared by queues, audio files and ExtAudioFile.
enum ChannelLayoutBytes {
    /// Mono, stereo, or N discrete channels in order (12 bytes, no channel descriptions).
    static func standard(channels: Int) -> [UInt8] {
        var value = AudioChannelLayout()
        switch channels {
        case 1: value.mChannelLayoutTag = kAudioChannelLayoutTag_Mono
        case 2: value.mChannelLayoutTag = kAudioChannelLayoutTag_Stereo
        default: value.mChannelLayoutTag = kAudioChannelLayoutTag_DiscreteInOrder | UInt32(channels)
        }
        return withUnsafeBytes(of: &value) { Array($0.prefix(12)) }
    }

    /// The channels the `size`-byte layout at `data` describes (its descriptions, its bitmap's
    /// bits, or its tag's low 16 bits). Throws `sizeError` when the layout is cut short.
    static func channelCount(_ data: UnsafeRawPointer, size: Int, sizeError: OSStatus) throws(AudioQueueError) -> Int {
        guard size >= 12 else {
            throw AudioQueueError(sizeError, "an AudioChannelLayout is at least 12 bytes, not \(size)")
        }
        let tag = data.loadUnaligned(as: UInt32.self)
        let descriptions = Int(data.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        switch tag {
        case kAudioChannelLayoutTag_UseChannelDescriptions:
            guard size >= 12 + 20 * descriptions else {
                throw AudioQueueError(sizeError, "a layout of \(descriptions) channel descriptions is \(12 + 20 * descriptions) bytes, not \(size)")
            }
            return descriptions
        case kAudioChannelLayoutTag_UseChannelBitmap:
            return data.loadUnaligned(fromByteOffset: 4, as: UInt32.self).nonzeroBitCount
        default:
            return Int(tag & 0xFFFF)
        }
    }
}
