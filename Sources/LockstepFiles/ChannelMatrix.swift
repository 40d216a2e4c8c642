import Foundation

/// A linear map from a file's channels to output channels: output `o` is the sum over inputs `i`
/// of `coefficient(output: o, input: i) × input i`.
///
/// ``standardDownmix(from:to:)`` is the documented default when a file has more channels than
/// the output; ``ChannelMap`` builds one from explicit routing (`--channel-map`, the session key
/// `channel_map`). The matrix is applied off the realtime thread (where a ``FilePlayer`` or a
/// session cue reads its file), so the render path mixes ready-made channels only.
///
/// **The default downmix** (files with more channels than the output; channels in WAV order):
/// - 5.1 → stereo, ITU-R BS.775: `Lo = L + 0.7071·C + 0.7071·Ls`,
///   `Ro = R + 0.7071·C + 0.7071·Rs`; the LFE channel (4) is dropped, as BS.775 does.
/// - 7.1 → stereo (L R C LFE Lb Rb Ls Rs), BS.775 extended: `Lo = L + 0.7071·(C + Lb + Ls)`,
///   `Ro = R + 0.7071·(C + Rb + Rs)`; LFE dropped.
/// - 5.1 or 7.1 → mono: the stereo downmix, then `M = 0.7071·(Lo + Ro)` (for 5.1 that is
///   BS.775's own mono: `0.7071·L + 0.7071·R + C + 0.5·Ls + 0.5·Rs`).
/// - any other N → mono: every channel at `1/√N` (equal power: N uncorrelated channels of the
///   same level keep that level).
/// - any other N → M (N > M > 1): input channels 1…M go to outputs 1…M unchanged; every further
///   channel is spread over all M outputs at `1/√M` (equal power).
///
/// Fewer channels than the output is not a downmix: mono plays on the first two outputs, and
/// other counts go channel to channel (outputs beyond them stay silent); nothing is dropped.
public struct ChannelMatrix: Sendable, Hashable, CustomStringConvertible {
    /// Channels read (the file's).
    public let inputCount: Int
    /// Channels produced.
    public let outputCount: Int
    /// `outputCount × inputCount` gains, row by row (row `o` holds output `o`'s gain per input).
    public let coefficients: [Float]
    /// Where the matrix comes from, for messages: `ITU-R BS.775 5.1 → stereo`, `--channel-map 2,1`, ….
    public let rule: String

    /// −3 dB, `1/√2`.
    public static let minus3dB: Float = 0.70710678

    /// Creates a matrix from its coefficients (`outputCount × inputCount`, row by row).
    public init(inputCount: Int, outputCount: Int, coefficients: [Float], rule: String) {
        precondition(coefficients.count == inputCount * outputCount, "a channel matrix needs outputs × inputs coefficients")
        self.inputCount = inputCount
        self.outputCount = outputCount
        self.coefficients = coefficients
        self.rule = rule
    }

    /// The gain from input channel `input` to output channel `output` (both from 0).
    public func coefficient(output: Int, input: Int) -> Float {
        coefficients[output * inputCount + input]
    }

    /// The input channels (from 0) that reach no output.
    public var droppedInputs: [Int] {
        (0..<inputCount).filter { input in (0..<outputCount).allSatisfy { coefficient(output: $0, input: input) == 0 } }
    }

    /// The default matrix for a file of `inputs` channels played into `outputs` channels: the
    /// downmix described in the type's documentation when `inputs > outputs`, nil otherwise (no
    /// conversion is needed: mono plays on the first two outputs, fewer channels go channel to
    /// channel).
    public static func standardDownmix(from inputs: Int, to outputs: Int) -> ChannelMatrix? {
        guard inputs > outputs, outputs >= 1 else { return nil }
        let h = minus3dB
        switch (inputs, outputs) {
        case (6, 2):
            // L R C LFE Ls Rs
            return ChannelMatrix(inputCount: 6, outputCount: 2, coefficients: [
                1, 0, h, 0, h, 0,
                0, 1, h, 0, 0, h,
            ], rule: "ITU-R BS.775 5.1 → stereo (LFE dropped)")
        case (8, 2):
            // L R C LFE Lb Rb Ls Rs
            return ChannelMatrix(inputCount: 8, outputCount: 2, coefficients: [
                1, 0, h, 0, h, 0, h, 0,
                0, 1, h, 0, 0, h, 0, h,
            ], rule: "ITU-R BS.775 7.1 → stereo (LFE dropped)")
        case (6, 1), (8, 1):
            let stereo = standardDownmix(from: inputs, to: 2)!
            let mono = (0..<inputs).map { h * (stereo.coefficient(output: 0, input: $0) + stereo.coefficient(output: 1, input: $0)) }
            return ChannelMatrix(inputCount: inputs, outputCount: 1, coefficients: mono,
                                 rule: "ITU-R BS.775 \(inputs == 6 ? "5.1" : "7.1") → mono (LFE dropped)")
        case (_, 1):
            let gain = 1 / Float(inputs).squareRoot()
            return ChannelMatrix(inputCount: inputs, outputCount: 1, coefficients: Array(repeating: gain, count: inputs),
                                 rule: "equal-power \(inputs) → 1")
        default:
            var coefficients = [Float](repeating: 0, count: inputs * outputs)
            let spread = 1 / Float(outputs).squareRoot()
            for input in 0..<inputs {
                for output in 0..<outputs {
                    coefficients[output * inputs + input] = input < outputs ? (input == output ? 1 : 0) : spread
                }
            }
            return ChannelMatrix(inputCount: inputs, outputCount: outputs, coefficients: coefficients,
                                 rule: "equal-power \(inputs) → \(outputs)")
        }
    }

    /// Applies the matrix to `frames` interleaved frames of ``inputCount`` channels, writing
    /// `frames` interleaved frames of ``outputCount`` channels (overwriting `output`).
    ///
    /// Allocates nothing; `input` and `output` must not overlap.
    public func apply(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>) {
        let ins = inputCount, outs = outputCount
        coefficients.withUnsafeBufferPointer { m in
            for frame in 0..<frames {
                let source = input + frame * ins
                let target = output + frame * outs
                for o in 0..<outs {
                    var sum: Float = 0
                    let row = o * ins
                    for i in 0..<ins { sum += m[row + i] * source[i] }
                    target[o] = sum
                }
            }
        }
    }

    /// For messages: the rule, e.g. `ITU-R BS.775 5.1 → stereo (LFE dropped)`.
    public var description: String { rule }
}

/// Explicit channel routing as a user writes it (`--channel-map`, the session key `channel_map`),
/// turned into a ``ChannelMatrix`` once the file's channel count is known.
///
/// Channels count from 1, as JACK's `out_1` and sox's `remix` do. Two forms:
/// - **A list**, one entry per output channel: `2,1` swaps a stereo file's channels; `1,1` plays
///   channel 1 on both outputs; `-` leaves an output silent (`1,-`).
/// - **Routes** `IN:OUT`, each sending file channel IN to output channel OUT, optionally with a
///   gain in dB after `@`: `1:1,2:2,3:1@-3,3:2@-3` (a centre channel at −3 dB on both sides).
///   Several routes may feed one output (they add) and one input may feed several outputs.
///
/// A file channel that no entry names is dropped — and the command says so, naming the file and
/// the channels (see ``ChannelMatrix/droppedInputs``).
public struct ChannelMap: Sendable, Hashable, CustomStringConvertible {
    /// One route: file channel → output channel (both from 1) with a gain in dB.
    public struct Route: Sendable, Hashable {
        /// The file channel, from 1.
        public var input: Int
        /// The output channel, from 1.
        public var output: Int
        /// Gain in dB (0 for unity).
        public var gainDB: Double
    }

    /// The routes, in the order written.
    public let routes: [Route]
    /// The text as written.
    public let text: String

    /// Parses a channel map.
    ///
    /// - Throws: ``ChannelMapError`` naming the entry at fault and what to write instead.
    public init(parsing text: String) throws(ChannelMapError) {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else {
            throw ChannelMapError(entry: text, problem: "the channel map is empty; write e.g. 1,2 (a list, one file channel per output) or 1:1,2:2 (routes IN:OUT)")
        }
        let entries = trimmed.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
        let usesRoutes = entries.contains { $0.contains(":") }
        var routes: [Route] = []
        for (index, entry) in entries.enumerated() {
            guard !entry.isEmpty else {
                throw ChannelMapError(entry: entry, problem: "entry \(index + 1) is empty; remove the extra comma")
            }
            if usesRoutes {
                guard entry.contains(":") else {
                    throw ChannelMapError(entry: entry, problem: "'\(entry)' is not a route IN:OUT; write every entry as IN:OUT (e.g. 3:1) or every entry as one file channel per output (e.g. 2,1), not both")
                }
                let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let (outputText, gainText) = Self.splitGain(parts.count > 1 ? parts[1] : "")
                guard let input = Self.channel(parts[0]) else {
                    throw ChannelMapError(entry: entry, problem: "'\(entry)': '\(parts[0])' is not a file channel; channels count from 1 (e.g. 3:1)")
                }
                guard let output = Self.channel(outputText) else {
                    throw ChannelMapError(entry: entry, problem: "'\(entry)': '\(outputText)' is not an output channel; channels count from 1 (e.g. 3:1)")
                }
                var gain = 0.0
                if let gainText {
                    var number = gainText.lowercased()
                    if number.hasSuffix("db") { number.removeLast(2) }
                    guard let value = Double(number), value.isFinite, value <= 12, value >= -200 else {
                        throw ChannelMapError(entry: entry, problem: "'\(entry)': gain '\(gainText)' is not a gain from -200 to +12 dB; write e.g. 3:1@-3")
                    }
                    gain = value
                }
                routes.append(Route(input: input, output: output, gainDB: gain))
            } else if entry == "-" {
                continue
            } else {
                guard let input = Self.channel(entry) else {
                    throw ChannelMapError(entry: entry, problem: "'\(entry)' (for output \(index + 1)) is not a file channel; write a channel number from 1, or - for silence")
                }
                routes.append(Route(input: input, output: index + 1, gainDB: 0))
            }
        }
        self.routes = routes
        self.text = trimmed
    }

    /// The matrix for a file of `inputs` channels into `outputs` channels.
    ///
    /// - Throws: ``ChannelMapError`` naming the entry whose file channel or output channel does
    ///   not exist (with how many there are).
    public func matrix(inputs: Int, outputs: Int) throws(ChannelMapError) -> ChannelMatrix {
        var coefficients = [Float](repeating: 0, count: inputs * outputs)
        for route in routes {
            let entry = entryText(route)
            guard route.input <= inputs else {
                throw ChannelMapError(entry: entry, problem: "'\(entry)': the file has \(inputs) channel\(inputs == 1 ? "" : "s"), so there is no file channel \(route.input)")
            }
            guard route.output <= outputs else {
                throw ChannelMapError(entry: entry, problem: "'\(entry)': the output has \(outputs) channel\(outputs == 1 ? "" : "s"), so there is no output channel \(route.output)")
            }
            let gain = Float(route.gainDB == 0 ? 1 : pow(10, route.gainDB / 20))
            coefficients[(route.output - 1) * inputs + (route.input - 1)] += gain
        }
        return ChannelMatrix(inputCount: inputs, outputCount: outputs, coefficients: coefficients, rule: "channel map \(text)")
    }

    /// The text as written.
    public var description: String { text }

    private func entryText(_ route: Route) -> String {
        let entries = text.split(separator: ",").map { String($0).trimmingSpaces }
        if entries.contains(where: { $0.contains(":") }) {
            return entries.first { entry in
                let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                return parts.count == 2 && Self.channel(parts[0]) == route.input
                    && Self.channel(Self.splitGain(parts[1]).0) == route.output
            } ?? "\(route.input):\(route.output)"
        }
        return "\(route.input)"
    }

    private static func splitGain(_ text: String) -> (String, String?) {
        guard let at = text.firstIndex(of: "@") else { return (text.trimmingSpaces, nil) }
        return (String(text[..<at]).trimmingSpaces, String(text[text.index(after: at)...]).trimmingSpaces)
    }

    private static func channel(_ text: String) -> Int? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(text),
              (1...64).contains(value) else { return nil }
        return value
    }
}

/// A channel map that cannot be parsed or does not fit the file or the output.
public struct ChannelMapError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The entry at fault, as written.
    public var entry: String
    /// What is wrong and what to write instead.
    public var problem: String

    /// Creates an error.
    public init(entry: String, problem: String) {
        self.entry = entry
        self.problem = problem
    }

    /// The problem.
    public var description: String { problem }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
