/**
 * Stepping through a recorded trace (behaviour.md §13.8), for the page's servers: the live daemon's
 * `GET /inspect/trace/<id>` and `loom inspect <trace file>`. The work is in
 * services/traceStepper.ts, next to the topic machine it feeds (this layer does not import machines).
 */
export { stepsFromTrace, STEPPER_MAX_CHARS, STEPPER_MAX_STEPS, type StepsDocument, type TraceStepView } from '../services/traceStepper.js';
