// Part 3 of the generated route conformance and isolation suite (test/conformance-suite.ts).
import { conformance } from "./conformance-suite";

conformance(2);
