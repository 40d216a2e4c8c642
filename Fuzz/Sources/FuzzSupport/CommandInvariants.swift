import Lockstep
import LockstepControl
import LockstepSession

/// What every command a control surface builds must be (the OSC, control-line and web-command
/// targets check each one): in range by the dispatcher's own check — so carrying it out converts
/// no number that can trap — and its times and ramps convertible to samples at the highest rate.
/// A command out of range, or a trap here, is a finding.
public func checkCommand(_ command: ControlCommand, address: String) {
    do throws(ControlError) {
        _ = try command.checked(address: address)
    } catch {
        preconditionFailure("a surface built a command out of range: \(command): \(error.message)")
    }
    let rate = Double(TimeLimit.maximumSampleRate)
    switch command {
    case .seek(let time):
        _ = time.samples(at: rate)
    case .setCueLevel(_, let decibels, let ramp), .setLayerGain(_, let decibels, let ramp):
        precondition(!decibels.isNaN && decibels <= SessionGain.maximum, "\(command)")
        _ = ramp.samples(at: rate)
        _ = SessionGain.format(decibels)
    default:
        break
    }
    _ = String(describing: command)
}

/// What every refusal must be: a message that says something.
public func checkRefusal(_ error: ControlError) {
    precondition(!error.message.isEmpty, "an error without a message")
}
