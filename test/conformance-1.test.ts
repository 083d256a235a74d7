// Part 1 of the generated route conformance and isolation suite (test/conformance-suite.ts).
import { conformance } from "./conformance-suite";

conformance(0);
