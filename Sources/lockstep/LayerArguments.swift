import Foundation
import LockstepFiles
import LockstepSession

/// Files, gains and offsets as given on the command line, validated.
struct LayerArguments {
    var files: [String]
    var gains: [Double]
    /// Each file's offset (0 for files past the last `--offset`).
    var offsets: [SessionTime]
    /// Each file's `--channel-map`, nil for the default (a downmix when it has more channels).
    var channelMaps: [ChannelMap?] = []

    init(command: String, files: [String], gains: [String], offsets: [SessionTime]) throws {
        guard gains.count <= files.count else {
            throw CLIError(message: "\(command): \(gains.count) --gain values for \(files.count) files; give at most one --gain per file", exitCode: 64)
        }
        guard offsets.count <= files.count else {
            throw CLIError(message: "\(command): \(offsets.count) --offset values for \(files.count) files; give at most one --offset per file", exitCode: 64)
        }
        var values: [Double] = []
        for text in gains {
            guard let value = parseGain(text), value <= 12 else {
                throw CLIError(message: "\(command): --gain '\(text)' is not a gain from -inf to +12 dB; write e.g. -6 or -6dB", exitCode: 64)
            }
            values.append(value)
        }
        self.files = files
        self.gains = files.indices.map { $0 < values.count ? values[$0] : 0 }
        self.offsets = files.indices.map { $0 < offsets.count ? offsets[$0] : .seconds(0) }
    }
}
