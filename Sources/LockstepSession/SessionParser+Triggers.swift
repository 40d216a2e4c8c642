import Foundation

/// MIDI triggers in the session format (`triggers:`): a message key, what narrows it, and the
/// command it sends.
extension SessionParser {
    /// Reads the `triggers:` list.
    mutating func parseTriggers(_ node: YAMLNode) -> [SessionDocument.Trigger] {
        let example = "'- { note: 60, do: go }'"
        guard case .sequence(let sequence) = node.content else {
            report(.invalidValue, node, "'triggers' must be a list of MIDI triggers such as \(example)")
            return []
        }
        var result: [SessionDocument.Trigger] = []
        for (index, item) in sequence.enumerated() {
            let label = "trigger \(index + 1)"
            guard case .mapping(let pairs) = item.content else {
                report(.invalidValue, item, "\(label) must be a mapping such as \(example)")
                continue
            }
            var message: SessionDocument.Trigger.Message?
            var messageKey: (String, YAMLNode)?
            var trigger = SessionDocument.Trigger(message: .note(0), location: location(of: item))
            trigger.source = SourceSpans(item, pairs: pairs)
            var complete = true
            /// A number from `range` for `key`, or nil (reported).
            func number(_ value: YAMLNode, _ key: String, _ range: ClosedRange<Int>, _ what: String) -> Int? {
                guard let text = scalar(value, "\(label) \(key)", expecting: what) else { complete = false; return nil }
                guard let number = Self.wholeNumber(text), range.contains(number) else {
                    report(.invalidValue, value, "\(label): \(key) '\(Self.excerpt(text))' is not \(what); write a whole number from \(range.lowerBound) to \(range.upperBound)")
                    complete = false
                    return nil
                }
                return number
            }
            for (key, value) in entries(pairs, allowed: Self.triggerKeys, context: label) {
                trigger.keyLocations[key] = location(of: value)
                switch key {
                case "note", "cc", "program", "msc":
                    if let (first, _) = messageKey {
                        report(.conflict, value, "\(label) has both '\(first)' and '\(key)'; a trigger answers one message: keep one of note, cc, program and msc")
                        complete = false
                        continue
                    }
                    messageKey = (key, value)
                    switch key {
                    case "note": message = number(value, key, 0...127, "a MIDI note number").map { .note($0) }
                    case "cc": message = number(value, key, 0...127, "a MIDI controller number").map { .controlChange($0) }
                    case "program": message = number(value, key, 0...127, "a MIDI program number (as sent, 0 to 127)").map { .programChange($0) }
                    default:
                        let names = SessionDocument.Trigger.ShowControlCommand.allCases.map(\.rawValue)
                        guard let text = scalar(value, "\(label) msc", expecting: "a MIDI Show Control command") else { complete = false; break }
                        if let command = SessionDocument.Trigger.ShowControlCommand(rawValue: text.lowercased()) {
                            message = .showControl(command)
                        } else {
                            report(.invalidValue, value, "\(label): msc '\(Self.excerpt(text))' is not a MIDI Show Control command this player answers\(Suggest.hint(for: text.lowercased(), in: names)); use one of \(names.joined(separator: ", "))")
                            complete = false
                        }
                    }
                case "channel": trigger.channel = number(value, key, 1...16, "a MIDI channel")
                case "velocity": trigger.value = number(value, key, 1...127, "a note-on velocity")
                case "value": trigger.value = number(value, key, 0...127, "a controller value")
                case "device": trigger.device = number(value, key, 0...127, "a MIDI Show Control device ID")
                case "do":
                    if let text = scalar(value, "\(label) do", expecting: "a command such as go, 'start bell' or stop"),
                       !text.trimmingCharacters(in: .whitespaces).isEmpty {
                        trigger.action = text
                    } else {
                        if isScalarValue(value) { report(.invalidValue, value, "\(label): 'do' must be a command such as go, 'start bell' or stop") }
                        complete = false
                    }
                default: break
                }
            }
            guard let (key, _) = messageKey else {
                report(.missingKey, item, "\(label) answers no MIDI message; give one of note, cc, program or msc, e.g. \(example)")
                continue
            }
            let isShowControl = key == "msc"
            for (wrong, right) in [("channel", !isShowControl), ("device", isShowControl),
                                   ("velocity", key == "note"), ("value", key == "cc")] where !right {
                if let at = trigger.keyLocations[wrong] {
                    let what = ["channel": "a channel (MIDI Show Control has device IDs: use 'device')",
                                "device": "a device ID (only MIDI Show Control has them; use 'channel')",
                                "velocity": "a velocity (only notes have one)",
                                "value": "a value (only control changes have one)"][wrong]!
                    diagnostics.append(SessionDiagnostic(.conflict, at: at, "\(label): a '\(key)' trigger has no \(what)"))
                    complete = false
                }
            }
            if trigger.action == nil && !isShowControl && trigger.keyLocations["do"] == nil {
                report(.missingKey, item, "\(label) has no 'do:'; say which command it sends, e.g. 'do: go' or 'do: start bell'")
                complete = false
            }
            if complete, let message {
                trigger.message = message
                result.append(trigger)
            }
        }
        return result
    }
}
