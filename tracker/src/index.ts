import { install } from './tracker.js';

install();
